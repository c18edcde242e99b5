import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { getRun, harnessEnv, script, waitForState } from '../support/engine.js';
import { createRun } from '../support/runs.js';
import { startTestServer, type TestServer } from '../support/server.js';

// GET /agent/runs/{id}/events: Server-Sent Events of a run's timeline and harness output, ending with `end`.

interface Received {
  id: string | undefined;
  event: string | undefined;
  data: any;
}

/** An open event stream: `next()` gives the events one by one; `close()` hangs up. */
async function connect(hangar: TestServer, runId: string, lastEventId?: string, apiKey = hangar.apiKey) {
  const abort = new AbortController();
  const response = await fetch(`${hangar.apiUrl}/agent/runs/${runId}/events`, {
    headers: { authorization: `Bearer ${apiKey}`, ...(lastEventId ? { 'last-event-id': lastEventId } : {}) },
    signal: abort.signal,
  });
  const queue: Received[] = [];
  const parser = createParser({
    onEvent: (message: EventSourceMessage) =>
      queue.push({ id: message.id, event: message.event, data: JSON.parse(message.data) }),
  });
  // An error answer keeps its body for the test to read.
  const body =
    response.ok && response.body
      ? response.body.pipeThrough(new TextDecoderStream())[Symbol.asyncIterator]()
      : undefined;
  return {
    response,
    /** The next event, or undefined once the server has closed the stream. */
    async next(): Promise<Received | undefined> {
      while (queue.length === 0) {
        const chunk = await body!.next();
        if (chunk.done) return undefined;
        parser.feed(chunk.value);
      }
      return queue.shift();
    },
    close: () => abort.abort(),
  };
}

/** Every event until the server closes the stream. */
async function readAll(stream: Awaited<ReturnType<typeof connect>>): Promise<Received[]> {
  const all: Received[] = [];
  for (let event = await stream.next(); event; event = await stream.next()) all.push(event);
  return all;
}

const positionOf = (id: string | undefined) => id!.split('-').map(BigInt) as [bigint, bigint];

describe('the live event stream of a run', () => {
  let hangar: TestServer;
  before(async () => {
    hangar = await startTestServer(harnessEnv());
  });
  after(() => hangar.stop());

  test('timeline and output events in order, then end; resumable with Last-Event-ID', async () => {
    const runId = await createRun(hangar, {
      prompt: script({ say: 'hello' }, { tool: 'ls' }, { raw: 'a log line' }, { done: 'all good' }),
    });
    const stream = await connect(hangar, runId);
    assert.equal(stream.response.status, 200);
    assert.match(stream.response.headers.get('content-type')!, /^text\/event-stream/);
    const events = await readAll(stream);

    const last = events[events.length - 1]!;
    assert.equal(last.event, 'end');
    assert.deepEqual(last.data, { state: 'SUCCEEDED' });
    assert.equal(events.filter((event) => event.event === 'end').length, 1);

    // The timeline, complete and in order: the same as GET /timeline.
    const timeline = events.filter((event) => event.event === 'timeline').map((event) => event.data);
    const stored = (await hangar.request('GET', `/agent/runs/${runId}/timeline`)).body.events;
    assert.deepEqual(timeline, stored);
    const types = timeline.map((event: { event_type: string }) => event.event_type);
    const expected = [
      'oz_run_created',
      'run_dispatched',
      'oz_run_claimed',
      'worker_container_ready',
      'agent_started',
      'oz_run_done',
    ];
    assert.deepEqual(
      types.filter((type: string) => expected.includes(type)),
      expected,
    );

    // The output: every line, with the protocol event parsed (null for a line that is not one).
    const output = events.filter((event) => event.event === 'output').map((event) => event.data);
    assert.deepEqual(
      output.map((data) => data.execution_id),
      output.map(() => 1),
    );
    assert.deepEqual(
      output.map((data) => data.event),
      [
        { type: 'text', text: 'hello' },
        { type: 'tool_call', id: 't1', name: 'bash', input: { command: 'ls' } },
        { type: 'tool_result', id: 't1', status: 'completed', output: 'ok' },
        null,
        { type: 'done', summary: 'all good' },
      ],
    );
    assert.equal(output[3].line, 'a log line');
    assert.deepEqual(JSON.parse(output[0].line), { type: 'text', text: 'hello' });

    // IDs are `<timeline seq>-<output seq>` positions that never go back.
    for (let index = 1; index < events.length; index++) {
      const [eventSeq, lineSeq] = positionOf(events[index]!.id);
      const [previousEventSeq, previousLineSeq] = positionOf(events[index - 1]!.id);
      assert.ok(
        eventSeq >= previousEventSeq && lineSeq >= previousLineSeq,
        `${events[index - 1]!.id} then ${events[index]!.id}`,
      );
    }

    // Resuming from the middle (after some timeline and some output) gives exactly what came later.
    const firstOutput = events.findIndex((event) => event.event === 'output');
    for (const middle of [2, firstOutput + 1]) {
      const resumed = await readAll(await connect(hangar, runId, events[middle]!.id));
      const [eventSeq, lineSeq] = positionOf(events[middle]!.id);
      const later = events.filter((event) => {
        const [a, b] = positionOf(event.id);
        return event.event === 'end' || (event.event === 'timeline' ? a > eventSeq : b > lineSeq);
      });
      const sorted = (list: Received[], kind: string) =>
        list.filter((event) => event.event === kind).map((event) => event.data);
      for (const kind of ['timeline', 'output', 'end'])
        assert.deepEqual(sorted(resumed, kind), sorted(later, kind), `${kind} after ${events[middle]!.id}`);
      assert.equal(resumed[resumed.length - 1]!.event, 'end');
    }

    // Resuming from the end gives the end alone.
    const fromEnd = await readAll(await connect(hangar, runId, last.id));
    assert.deepEqual(
      fromEnd.map((event) => event.event),
      ['end'],
    );
  });

  test('a running run streams its output before it ends, then the rest and the end', async () => {
    const runId = await createRun(hangar, {
      prompt: script({ say: 'working' }, { listen: true }, { done: 'finished' }),
      config: { harness: { type: 'listener' } },
    });
    const stream = await connect(hangar, runId);
    const seen: Received[] = [];
    for (;;) {
      const event = await stream.next();
      assert.ok(event, 'the stream ended before any output');
      seen.push(event);
      if (event.event === 'output' && event.data.event?.text === 'working') break;
    }
    // The harness listens until told "bye": the run is certainly still going.
    assert.equal((await getRun(hangar, runId)).state, 'INPROGRESS');
    assert.ok(seen.some((event) => event.event === 'timeline' && event.data.event_type === 'agent_started'));
    assert.ok(!seen.some((event) => event.event === 'end'));

    const followup = await hangar.request('POST', `/agent/runs/${runId}/followups`, { body: { message: 'bye' } });
    assert.equal(followup.status, 200);
    const rest = await readAll(stream);
    assert.deepEqual(rest[rest.length - 1]!.data, { state: 'SUCCEEDED' });
    const texts = rest
      .filter((event) => event.event === 'output' && event.data.event?.type === 'text')
      .map((event) => event.data.event.text);
    assert.deepEqual(texts, ['heard: bye']);
    const types = rest.filter((event) => event.event === 'timeline').map((event) => event.data.event_type);
    assert.ok(types.includes('followup_received') && types.includes('oz_run_done'), `${types}`);
    await waitForState(hangar, runId, 'SUCCEEDED');
  });

  test('a cancelled run’s stream ends after the harness has stopped, with the whole timeline', async () => {
    const runId = await createRun(hangar, {
      prompt: script({ say: 'working' }, { listen: true }, { done: 'finished' }),
      config: { harness: { type: 'listener' } },
    });
    const stream = await connect(hangar, runId);
    const events: Received[] = [];
    for (let event = await stream.next(); event; event = await stream.next()) {
      events.push(event);
      if (event.event === 'output' && event.data.event?.text === 'working') {
        assert.equal((await hangar.request('POST', `/agent/runs/${runId}/cancel`)).status, 200);
      }
    }
    assert.deepEqual(events[events.length - 1]!.data, { state: 'CANCELLED' });
    // The harness is stopped after the run is CANCELLED: its vm_shutdown is in the stream all the same.
    const timeline = events.filter((event) => event.event === 'timeline').map((event) => event.data);
    assert.deepEqual(timeline, (await hangar.request('GET', `/agent/runs/${runId}/timeline`)).body.events);
    assert.ok(timeline.some((event: { event_type: string }) => event.event_type === 'vm_shutdown'));
  });

  test('404 for an unknown run and for another team’s run', async () => {
    const unknown = await connect(hangar, '00000000-0000-0000-0000-000000000000');
    assert.equal(unknown.response.status, 404);
    assert.equal(((await unknown.response.json()) as any).error_code, 'resource_not_found');

    const runId = await createRun(hangar, { prompt: script({ done: 'done' }) });
    const stranger = await hangar.createTeamWithUser();
    const foreign = await connect(hangar, runId, undefined, stranger.apiKey);
    assert.equal(foreign.response.status, 404);
    assert.equal(((await foreign.response.json()) as any).error_code, 'resource_not_found');
    await waitForState(hangar, runId, 'SUCCEEDED');
  });
});
