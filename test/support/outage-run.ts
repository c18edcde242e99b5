/**
 * A run of the outage harness (test/platform/outage-harness.mjs) seen through the API, for the tests that stop or
 * kill PostgreSQL while its agent finishes: the server's or a self-hosted worker's.
 */
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { eventually, textEvents } from './engine.js';

/** Waits for a `release` file in its workspace, then writes 20 lines, a progress note and an artifact, and ends. */
export const OUTAGE_HARNESS = fileURLToPath(new URL('../platform/outage-harness.mjs', import.meta.url));

export interface OutageApi {
  request(method: string, route: string, body?: unknown): Promise<Response>;
  run(runId: string): Promise<any>;
  /** The transcript's text events; none while nothing is written yet. */
  texts(runId: string): Promise<string[]>;
}

/** The API of a `hangar serve` process (spawnKeyedServer's), with its key. */
export function outageApi(server: { url: string; apiKey: string }): OutageApi {
  const request = (method: string, route: string, body?: unknown) =>
    fetch(`${server.url}/api/v1${route}`, {
      method,
      headers: { authorization: `Bearer ${server.apiKey}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
      redirect: 'manual',
    });
  return {
    request,
    run: async (runId) => (await (await request('GET', `/agent/runs/${runId}`)).json()) as any,
    texts: async (runId) => {
      const link = await request('GET', `/agent/runs/${runId}/transcript`);
      if (link.status === 404) return [];
      if (link.status !== 302) throw new Error(`transcript of ${runId}: ${link.status} ${await link.text()}`);
      return textEvents(await (await fetch(link.headers.get('location')!)).text());
    },
  };
}

/** Resolves once the harness is running: the run is INPROGRESS and its first line is in the transcript. */
export async function outageHarnessWaiting(api: OutageApi, runId: string): Promise<void> {
  // Polled: a spawned server moves the run (no signal here tells of it), and answers 503 while its database is down.
  await eventually('the harness to run', async () => {
    const run = await api.run(runId);
    assert.ok(['QUEUED', 'PENDING', 'CLAIMED', 'INPROGRESS'].includes(run.state), `unexpected ${run.state}`);
    return run.state === 'INPROGRESS' && (await api.texts(runId)).includes('waiting for the outage');
  });
}

/**
 * Waits for the run's end and checks that nothing the agent did during the outage was lost: SUCCEEDED with the
 * harness's summary, the whole transcript, and each of `onceEach` once on the timeline. Returns the run.
 */
export async function assertNothingLost(api: OutageApi, runId: string, onceEach: string[]): Promise<any> {
  let run: any;
  // Polled, as outageHarnessWaiting.
  await eventually('the run to end', async () => {
    run = await api.run(runId);
    return ['SUCCEEDED', 'FAILED', 'ERROR', 'BLOCKED', 'CANCELLED'].includes(run.state);
  });
  assert.equal(run.state, 'SUCCEEDED', JSON.stringify(run.status_message));
  assert.equal(run.status_message?.message, 'finished while the database was down');
  const lines = Array.from({ length: 20 }, (_, index) => `line ${index + 1} written during the outage`);
  assert.deepEqual(await api.texts(runId), ['waiting for the outage', ...lines]);
  const timeline = (await (await api.request('GET', `/agent/runs/${runId}/timeline`)).json()) as {
    events: Array<{ event_type: string }>;
  };
  const types = timeline.events.map((event) => event.event_type);
  for (const type of onceEach)
    assert.equal(types.filter((seen) => seen === type).length, 1, `${type} once in ${types.join(', ')}`);
  return run;
}
