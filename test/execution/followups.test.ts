import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { getRun, harnessEnv, script, waitForState } from '../support/engine.js';
import { createRun } from '../support/runs.js';
import { startTestServer, type TestServer } from '../support/server.js';

// POST /agent/runs/{id}/followups, one test per route of the interface's state table: queued (joins the
// initial input), running (live, or the next execution when the harness takes no input), ended (a new
// execution continues the conversation). oz-agent-sdk (1.0.0-alpha.8) has no follow-ups method, so there is
// no SDK variant here.

const LISTENER = { harness: { type: 'listener' } };
const ENDED = ['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED', 'BLOCKED'];

interface TimelineEvent {
  event_type: string;
  execution_id?: string;
  payload?: Record<string, unknown>;
}

/** What the script harness's `task` step reports about the task it was given. */
interface TaskReport {
  followups: string[];
  history: number;
  kind: string;
}

function followup(hangar: TestServer, runId: string, body: unknown, apiKey?: string) {
  return hangar.request('POST', `/agent/runs/${runId}/followups`, { body, apiKey });
}

async function accepted(hangar: TestServer, runId: string, message: string): Promise<void> {
  const response = await followup(hangar, runId, { message });
  assert.equal(response.status, 200, JSON.stringify(response.body));
  assert.deepEqual(response.body, {});
}

async function timeline(hangar: TestServer, runId: string): Promise<TimelineEvent[]> {
  const response = await hangar.request('GET', `/agent/runs/${runId}/timeline`);
  assert.equal(response.status, 200, JSON.stringify(response.body));
  return response.body.events;
}

async function poll<T>(what: string, attempt: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await attempt();
    if (value !== undefined) return value;
    // What it looks for is the transcript (the harness's report, its text), whose writes send no signal.
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** The conversation's steps (one per execution), once it has `steps` of them. */
async function steps(hangar: TestServer, runId: string, count = 1): Promise<any[]> {
  return poll(`${count} conversation steps of ${runId}`, async () => {
    const response = await hangar.request('GET', `/agent/runs/${runId}/conversation`);
    return response.status === 200 && response.body.steps.length >= count ? response.body.steps : undefined;
  });
}

const texts = (step: any, role: string): string[] =>
  step.messages
    .filter((message: any) => message.role === role)
    .flatMap((message: any) =>
      message.content.filter((block: any) => block.type === 'text').map((block: any) => block.text),
    );

/** The `task` report in a conversation step (the assistant text that is the report's JSON). */
function report(step: any): TaskReport {
  const text = texts(step, 'assistant').find((candidate) => candidate.startsWith('{"followups"'));
  assert.ok(text, `a task report in ${JSON.stringify(step)}`);
  return JSON.parse(text);
}

/** Waits until the harness of execution `execution` has reported its task, i.e. it is running. */
async function reported(hangar: TestServer, runId: string, execution = 1): Promise<TaskReport> {
  return poll(`the task report of execution ${execution} of ${runId}`, async () => {
    const all = await steps(hangar, runId, execution);
    const step = all[execution - 1];
    return step && texts(step, 'assistant').some((text) => text.startsWith('{"followups"')) ? report(step) : undefined;
  });
}

async function heard(hangar: TestServer, runId: string, text: string): Promise<void> {
  await poll(`"${text}" in the conversation of ${runId}`, async () => {
    const all = await steps(hangar, runId);
    return all.some((step) => texts(step, 'assistant').includes(text)) ? true : undefined;
  });
}

/** Executions named by the timeline (run-level events such as oz_run_created and oz_run_cancelled name none). */
const executionsOf = (events: TimelineEvent[]) => [
  ...new Set(events.flatMap((event) => (event.execution_id ? [event.execution_id] : []))),
];
const routesOf = (events: TimelineEvent[]) =>
  events.filter((event) => event.event_type === 'followup_received').map((event) => event.payload?.route);
const typesIn = (events: TimelineEvent[], execution: string) =>
  events.filter((event) => event.execution_id === execution).map((event) => event.event_type);

describe('a follow-up to a queued run', () => {
  let hangar: TestServer;
  before(async () => {
    // One run at a time: the second run waits while the first listens.
    hangar = await startTestServer(harnessEnv({}, { HANGAR_MAX_CONCURRENT_RUNS: '1' }));
  });
  after(() => hangar.stop());

  test('joins the initial input of the execution that starts it', async () => {
    const first = await createRun(hangar, { prompt: script({ listen: true }, { done: 'first' }), config: LISTENER });
    await waitForState(hangar, first, 'INPROGRESS');
    const second = await createRun(hangar, { prompt: script({ task: true }, { done: 'second' }) });
    assert.equal((await getRun(hangar, second)).state, 'QUEUED');

    // Nothing to continue from yet: an empty follow-up (or none at all) is refused.
    for (const body of [{ message: '' }, { message: '   ' }, {}]) {
      const refused = await followup(hangar, second, body);
      assert.equal(refused.status, 400, JSON.stringify(body));
      assert.equal(refused.body.error_code, 'invalid_request');
    }
    await accepted(hangar, second, 'also update the changelog');
    assert.equal((await getRun(hangar, second)).state, 'QUEUED');

    await accepted(hangar, first, 'bye');
    assert.equal((await waitForState(hangar, second, ...ENDED)).state, 'SUCCEEDED');
    assert.equal((await waitForState(hangar, first, ...ENDED)).state, 'SUCCEEDED');

    const [step, ...more] = await steps(hangar, second);
    assert.equal(more.length, 0);
    assert.deepEqual(report(step), {
      ...report(step),
      followups: ['also update the changelog'],
      history: 0,
      kind: 'agent',
    });
    assert.deepEqual(texts(step, 'user'), [script({ task: true }, { done: 'second' }), 'also update the changelog']);
    const events = await timeline(hangar, second);
    assert.deepEqual(executionsOf(events), ['1']);
    assert.deepEqual(routesOf(events), ['initial_input']);
    assert.ok(!events.some((event) => event.event_type === 'run_continued'));
  });
});

describe('follow-ups to running and ended runs', () => {
  let hangar: TestServer;
  before(async () => {
    hangar = await startTestServer(harnessEnv());
  });
  after(() => hangar.stop());

  test('running, harness accepts input: delivered live to the same execution', async () => {
    const runId = await createRun(hangar, {
      prompt: script({ say: 'listening' }, { listen: true }, { done: 'listened' }),
      config: LISTENER,
    });
    // The harness is reading its input once it has said so (earlier, a follow-up would join the task instead).
    await heard(hangar, runId, 'listening');
    await accepted(hangar, runId, 'hello there');
    await heard(hangar, runId, 'heard: hello there');
    assert.equal((await getRun(hangar, runId)).state, 'INPROGRESS');
    await accepted(hangar, runId, 'bye');
    assert.equal((await waitForState(hangar, runId, ...ENDED)).state, 'SUCCEEDED');

    const [step, ...more] = await steps(hangar, runId);
    assert.equal(more.length, 0);
    assert.deepEqual(texts(step, 'user').slice(1), ['hello there', 'bye']);
    assert.deepEqual(texts(step, 'assistant'), ['listening', 'heard: hello there', 'heard: bye']);
    const events = await timeline(hangar, runId);
    assert.deepEqual(executionsOf(events), ['1']);
    assert.deepEqual(routesOf(events), ['live', 'live']);
    assert.ok(!events.some((event) => event.event_type === 'run_continued'));
  });

  test('running, harness takes no input: the next execution, started when this one ends, takes it', async () => {
    // The sleep keeps the harness running while the follow-up arrives; nothing is measured.
    const runId = await createRun(hangar, { prompt: script({ task: true }, { sleep: 2000 }, { done: 'done' }) });
    await reported(hangar, runId, 1);
    await accepted(hangar, runId, 'and the tests too');
    assert.equal((await waitForState(hangar, runId, ...ENDED)).state, 'SUCCEEDED');

    const events = await timeline(hangar, runId);
    assert.deepEqual(routesOf(events), ['live']);
    assert.deepEqual(executionsOf(events), ['1', '2']);
    const second = typesIn(events, '2');
    assert.equal(second[0], 'run_continued');
    for (const type of ['run_dispatched', 'agent_started', 'oz_run_done'])
      assert.ok(second.includes(type), `${type} in ${second}`);
    assert.ok(typesIn(events, '1').includes('oz_run_done'));

    const [first, next] = await steps(hangar, runId, 2);
    assert.deepEqual(report(first).followups, []);
    assert.deepEqual(report(next).followups, ['and the tests too']);
    assert.ok(report(next).history > 0);
  });

  for (const [ended, prompt] of [
    ['SUCCEEDED', script({ task: true }, { done: 'done' })],
    ['FAILED', script({ task: true }, { fail: 'the tests are red' })],
  ] as const) {
    test(`ended ${ended}: a new execution continues the conversation`, async () => {
      const runId = await createRun(hangar, { prompt });
      assert.equal((await waitForState(hangar, runId, ...ENDED)).state, ended);
      const { conversation_id: conversationId } = await getRun(hangar, runId);

      const response = await followup(hangar, runId, { message: 'one more thing', mode: 'plan' });
      assert.equal(response.status, 200, JSON.stringify(response.body));
      const run = await waitForState(hangar, runId, ...ENDED);
      assert.equal(run.state, ended);
      assert.equal(run.conversation_id, conversationId);

      const events = await timeline(hangar, runId);
      const received = events.find((event) => event.event_type === 'followup_received');
      assert.deepEqual(received, { ...received, execution_id: '2', payload: { route: 'new_execution', mode: 'plan' } });
      // Back through the queue: execution 2 was dispatched like a new run.
      for (const type of ['agent_started', ended === 'SUCCEEDED' ? 'oz_run_done' : 'oz_run_failed']) {
        assert.ok(typesIn(events, '2').includes(type), `${type} in execution 2: ${typesIn(events, '2')}`);
      }
      const all = await steps(hangar, runId, 2);
      assert.equal(all.length, 2);
      assert.deepEqual(report(all[1]), { ...report(all[1]), followups: ['one more thing'], kind: 'agent' });
      assert.ok(report(all[1]).history > 0);
      assert.deepEqual(texts(all[1], 'user'), ['one more thing']);
    });
  }

  test('ended CANCELLED: a new execution continues the conversation', async () => {
    const runId = await createRun(hangar, {
      prompt: script({ task: true }, { listen: true }, { done: 'done' }),
      config: LISTENER,
    });
    await reported(hangar, runId, 1);
    assert.equal((await hangar.request('POST', `/agent/runs/${runId}/cancel`)).status, 200);
    assert.equal((await waitForState(hangar, runId, ...ENDED)).state, 'CANCELLED');

    await accepted(hangar, runId, 'try again');
    const again = await reported(hangar, runId, 2);
    assert.deepEqual(again.followups, ['try again']);
    assert.ok(again.history > 0);
    // Execution 2 is running its listener: this one goes to it live.
    await accepted(hangar, runId, 'bye');
    assert.equal((await waitForState(hangar, runId, ...ENDED)).state, 'SUCCEEDED');

    const events = await timeline(hangar, runId);
    assert.deepEqual(routesOf(events), ['new_execution', 'live']);
    assert.ok(events.some((event) => event.event_type === 'oz_run_cancelled'));
    assert.ok(typesIn(events, '2').includes('oz_run_done'), `${typesIn(events, '2')}`);
    assert.equal((await steps(hangar, runId, 2)).length, 2);
  });

  test('an empty message continues an ended run from its saved conversation', async () => {
    const runId = await createRun(hangar, { prompt: script({ task: true }, { done: 'done' }) });
    await waitForState(hangar, runId, ...ENDED);
    await accepted(hangar, runId, '');
    assert.equal((await waitForState(hangar, runId, ...ENDED)).state, 'SUCCEEDED');
    const all = await steps(hangar, runId, 2);
    assert.deepEqual(report(all[1]).followups, []);
    assert.ok(report(all[1]).history > 0);
    assert.deepEqual(executionsOf(await timeline(hangar, runId)), ['1', '2']);
  });

  test('a malformed body is refused and changes nothing', async () => {
    const runId = await createRun(hangar, { prompt: script({ done: 'done' }) });
    await waitForState(hangar, runId, ...ENDED);
    for (const body of [
      { message: 42 },
      { message: ['a'] },
      { message: 'x', mode: 'turbo' },
      { message: 'x', mode: 7 },
      '{"message":',
      '[1]',
      '"text"',
      'null',
    ]) {
      const response = await followup(hangar, runId, body);
      assert.equal(response.status, 400, `${JSON.stringify(body)}: ${JSON.stringify(response.body)}`);
      assert.equal(response.body.error_code, 'invalid_request');
    }
    assert.equal((await getRun(hangar, runId)).state, 'SUCCEEDED');
    assert.deepEqual(routesOf(await timeline(hangar, runId)), []);
  });

  test('404 for an unknown run and for another team’s run', async () => {
    const unknown = await followup(hangar, '00000000-0000-0000-0000-000000000000', { message: 'hi' });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.error_code, 'resource_not_found');

    const runId = await createRun(hangar, { prompt: script({ done: 'done' }) });
    await waitForState(hangar, runId, ...ENDED);
    const stranger = await hangar.createTeamWithUser();
    const foreign = await followup(hangar, runId, { message: 'hi' }, stranger.apiKey);
    assert.equal(foreign.status, 404);
    assert.equal(foreign.body.error_code, 'resource_not_found');
    assert.equal((await getRun(hangar, runId)).state, 'SUCCEEDED');
    assert.deepEqual(routesOf(await timeline(hangar, runId)), []);
  });
});
