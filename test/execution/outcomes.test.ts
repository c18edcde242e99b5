import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  eventuallySignalled,
  harnessEnv,
  outputTexts,
  script,
  timelineTypes,
  waitForState,
} from '../support/engine.js';
import { createRun } from '../support/runs.js';
import { startTestServer, type TestServer } from '../support/server.js';

const ENDED = ['SUCCEEDED', 'FAILED', 'ERROR', 'BLOCKED', 'CANCELLED'];

describe('how an execution ends', () => {
  let hangar: TestServer;
  before(async () => {
    process.env.HANGAR_TEST_SECRET = 'must-not-leak';
    hangar = await startTestServer(harnessEnv({ unset: { command: ['/definitely/not/here'] } }));
  });
  after(async () => {
    delete process.env.HANGAR_TEST_SECRET;
    await hangar.stop();
  });

  const finish = async (body: Record<string, unknown>) => {
    const runId = await createRun(hangar, body);
    return { runId, run: await waitForState(hangar, runId, ...ENDED) };
  };

  test('exit 0 without a final event is SUCCEEDED', async () => {
    const { run } = await finish({ prompt: script({ say: 'hi' }) });
    assert.equal(run.state, 'SUCCEEDED');
    assert.equal(run.status_message, undefined);
  });

  test('a non-zero exit is FAILED with the exit code in the status message', async () => {
    const { runId, run } = await finish({ prompt: script({ say: 'oops' }, { exit: 4 }) });
    assert.equal(run.state, 'FAILED');
    assert.match(run.status_message.message, /exited with code 4/);
    assert.ok((await timelineTypes(hangar, runId)).includes('oz_run_failed'));
  });

  test('a failed event is FAILED with its message and code; ask_user is BLOCKED', async () => {
    const failed = await finish({ prompt: script({ fail: 'tests do not pass' }) });
    assert.equal(failed.run.state, 'FAILED');
    assert.equal(failed.run.status_message.message, 'tests do not pass');
    const blocked = await finish({ prompt: script({ ask: 'which branch?' }) });
    assert.equal(blocked.run.state, 'BLOCKED');
    assert.equal(blocked.run.status_message.message, 'which branch?');
    assert.ok((await timelineTypes(hangar, blocked.runId)).includes('oz_run_blocked'));
  });

  test('a harness binary that does not exist fails the run', async () => {
    const { run } = await finish({ prompt: 'x', config: { harness: { type: 'unset' } } });
    assert.equal(run.state, 'FAILED');
    assert.match(run.status_message.message, /code 127/);
  });

  test('the harness gets a scrubbed environment with run-scoped variables', async () => {
    const { runId } = await finish({ prompt: script({ task: true }) });
    const [report] = await outputTexts(hangar, runId);
    const seen = JSON.parse(report!);
    assert.equal(seen.env.run, runId);
    assert.equal(seen.env.token, true);
    assert.equal(seen.env.secret, null, 'variables of the server do not reach the harness');
  });

  test('a harness type the server does not know is refused at creation; a known one it lacks fails the run', async () => {
    const unknown = await hangar.request('POST', '/agent/runs', {
      body: { prompt: 'x', config: { harness: { type: 'nope' } } },
    });
    assert.equal(unknown.status, 400);
    assert.match(unknown.body.detail, /config\.harness\.type/);
    const { run } = await finish({ prompt: 'x', config: { harness: { type: 'claude' } } });
    assert.equal(run.state, 'FAILED');
    assert.equal(run.status_message.error_code, 'integration_not_configured');
  });

  test('a plain-text harness keeps its transcript but has no normalized conversation (422)', async () => {
    const { runId, run } = await finish({ prompt: 'just words', config: { harness: { type: 'text' } } });
    assert.equal(run.state, 'SUCCEEDED');
    const conversation = await hangar.request('GET', `/agent/runs/${runId}/conversation`);
    assert.equal(conversation.status, 422);
    assert.equal(conversation.body.error_code, 'operation_not_supported');
    assert.deepEqual(await outputTexts(hangar, runId), ['echo: just words']);
  });
});

describe('transcript and conversation', () => {
  let hangar: TestServer;
  before(async () => {
    hangar = await startTestServer(harnessEnv());
  });
  after(() => hangar.stop());

  const link = (path: string, apiKey = hangar.apiKey) =>
    fetch(`${hangar.apiUrl}${path}`, { headers: { authorization: `Bearer ${apiKey}` }, redirect: 'manual' });

  test('the transcript is a 302 to a signed, time-limited link that needs no key; tampering is refused', async () => {
    const runId = await createRun(hangar, { prompt: script({ say: 'one' }, { raw: 'a log line' }, { done: 'ok' }) });
    await waitForState(hangar, runId, 'SUCCEEDED');
    const response = await link(`/agent/runs/${runId}/transcript`);
    assert.equal(response.status, 302);
    const location = new URL(response.headers.get('location')!);
    assert.ok(Number(location.searchParams.get('expires')) * 1000 > Date.now());
    const download = await fetch(location);
    assert.equal(download.status, 200);
    const lines = (await download.text()).trim().split('\n');
    assert.deepEqual(lines, ['{"type":"text","text":"one"}', 'a log line', '{"type":"done","summary":"ok"}']);

    const tampered = new URL(location);
    tampered.pathname = tampered.pathname.replace(runId, (await createRun(hangar)) as string);
    assert.equal((await fetch(tampered)).status, 403);
    const expired = new URL(location);
    expired.searchParams.set('expires', '1000');
    assert.equal((await fetch(expired)).status, 403);
  });

  test('404 for a run without a transcript, for another team, and for an unknown conversation', async () => {
    const queued = await createRun(hangar, { prompt: 'x', config: { harness: { type: 'claude' } } });
    await waitForState(hangar, queued, ...ENDED);
    assert.equal((await link(`/agent/runs/${queued}/transcript`)).status, 404);
    assert.equal((await hangar.request('GET', `/agent/runs/${queued}/conversation`)).status, 404);
    const other = await hangar.createTeamWithUser();
    const runId = await createRun(hangar, { prompt: script({ say: 'private' }) });
    await waitForState(hangar, runId, 'SUCCEEDED');
    assert.equal((await link(`/agent/runs/${runId}/transcript`, other.apiKey)).status, 404);
    assert.equal(
      (await hangar.request('GET', `/agent/runs/${runId}/conversation`, { apiKey: other.apiKey })).status,
      404,
    );
    assert.equal((await hangar.request('GET', '/agent/conversations/nope')).status, 404);
  });

  test('a conversation is served by its id, with its transcript as a signed link', async () => {
    const runId = await createRun(hangar, { prompt: script({ say: 'first' }) });
    const run = await waitForState(hangar, runId, 'SUCCEEDED');
    const conversation = await hangar.request('GET', `/agent/conversations/${run.conversation_id}`);
    assert.equal(conversation.status, 200);
    assert.equal(conversation.body.conversation_id, run.conversation_id);
    assert.equal(conversation.body.steps[0].messages[1].content[0].text, 'first');
    const other = await hangar.createTeamWithUser();
    assert.equal(
      (await hangar.request('GET', `/agent/conversations/${run.conversation_id}`, { apiKey: other.apiKey })).status,
      404,
    );
    const response = await link(`/agent/conversations/${run.conversation_id}/transcript`);
    assert.equal(response.status, 302);
    assert.equal(
      (await (await fetch(response.headers.get('location')!)).text()).trim(),
      '{"type":"text","text":"first"}',
    );
  });
});

describe('concurrency limits', () => {
  let hangar: TestServer;
  before(async () => {
    hangar = await startTestServer(
      harnessEnv({}, { HANGAR_MAX_CONCURRENT_RUNS: '2', HANGAR_MAX_CONCURRENT_RUNS_PER_TEAM: '1' }),
    );
  });
  after(() => hangar.stop());

  test('at capacity a run waits in QUEUED and the create response says at_capacity', async () => {
    const blocker = await createRun(hangar, { prompt: script({ sleep: 120_000 }) });
    await waitForState(hangar, blocker, 'INPROGRESS');
    const created = await hangar.request('POST', '/agent/runs', { body: { prompt: script({ say: 'waited' }) } });
    assert.equal(created.status, 200);
    assert.equal(created.body.at_capacity, true);
    // Another team still has room under the global limit.
    const other = await hangar.createTeamWithUser();
    const elsewhere = await hangar.request('POST', '/agent/runs', {
      apiKey: other.apiKey,
      body: { prompt: script({ say: 'other team' }) },
    });
    assert.equal(elsewhere.body.at_capacity, undefined);
    await eventuallySignalled('the other team runs at once', async () => {
      const run = await hangar.request('GET', `/agent/runs/${elsewhere.body.run_id}`, { apiKey: other.apiKey });
      return run.body.state === 'SUCCEEDED';
    });
    assert.equal((await hangar.request('GET', `/agent/runs/${created.body.run_id}`)).body.state, 'QUEUED');

    assert.equal((await hangar.request('POST', `/agent/runs/${blocker}/cancel`)).status, 200);
    assert.equal((await waitForState(hangar, created.body.run_id, ...ENDED)).state, 'SUCCEEDED');
    await eventuallySignalled('the waiting run was dispatched after the cancel', async () =>
      (await timelineTypes(hangar, created.body.run_id)).includes('run_dispatched'),
    );
  });
});
