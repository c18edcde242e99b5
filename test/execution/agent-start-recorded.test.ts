import assert from 'node:assert/strict';
import { test } from 'node:test';
import pg from 'pg';
import { eventually, harnessEnv, script, timelineTypes, waitForState } from '../support/engine.js';
import { engineWaitsOnTranscript } from '../support/engine-locks.js';
import { onPostgres, spawnKeyedServer, stopChild } from '../support/processes.js';
import { createRun } from '../support/runs.js';
import { createTestDatabase, startTestServer, type TestServer } from '../support/server.js';

/**
 * Issue 23 item 6: `agent_started` was recorded before the harness process existed, so an engine that died in
 * between left a run marked started whose agent never ran; its lease expired into ERROR instead of the queue. The
 * engine is held in that gap for real: a follow-up's execution reads the conversation so far before its harness
 * starts, and another session holds a lock on the transcript table while the engine is SIGKILLed there.
 */
test('an engine that dies before the harness process exists leaves the run to be queued again, not ended ERROR', {
  skip: onPostgres() ? false : 'holding the engine on a lock takes a second connection (PostgreSQL)',
}, async (t) => {
  const database = await createTestDatabase();
  t.after(() => database.drop());
  const doomed = await spawnKeyedServer(database, harnessEnv({}, { HANGAR_RUN_LEASE_SECONDS: '3' }));
  t.after(() => stopChild(doomed.child, 'SIGKILL'));
  const api = async (method: string, route: string, body: unknown) => {
    const response = await fetch(`${doomed.url}/api/v1${route}`, {
      method,
      headers: doomed.headers,
      body: JSON.stringify(body),
    });
    assert.equal(response.status, 200, await response.clone().text());
    return response.json() as Promise<Record<string, unknown>>;
  };
  const client = new pg.Client({ connectionString: database.databaseUrl });
  // Ended by the database's drop at the end of the test, whichever runs first.
  client.on('error', () => undefined);
  await client.connect();
  t.after(() => client.end());
  const stateOf = async (runId: string) =>
    (await client.query<{ state: string }>('SELECT state FROM runs WHERE id = $1', [runId])).rows[0]!.state;

  const runId = (await api('POST', '/agent/runs', { prompt: script({ say: 'hello' }) })).run_id as string;
  await eventually('the first execution succeeds', async () => (await stateOf(runId)) === 'SUCCEEDED');

  // The follow-up's execution will wait for the transcript table, after its claim and before its harness.
  await client.query('BEGIN');
  await client.query('LOCK TABLE run_transcript IN ACCESS EXCLUSIVE MODE');
  await api('POST', `/agent/runs/${runId}/followups`, { message: 'again' });
  await engineWaitsOnTranscript(client);
  await stopChild(doomed.child, 'SIGKILL');
  await client.query('ROLLBACK');

  // No harness ran, so nothing says it did: the run is still only claimed, and comes back to the queue.
  assert.equal(await stateOf(runId), 'CLAIMED');
  const survivor = await startTestServer(doomed.env, { database });
  t.after(() => survivor.stop());
  await eventually('the run was queued again', async () =>
    (await timelineTypes(survivor, runId)).includes('run_requeued'),
  );
  const run = await waitForState(survivor, runId, 'SUCCEEDED', 'FAILED', 'ERROR');
  assert.equal(run.state, 'SUCCEEDED');
});

/**
 * The other side of recording the start after the harness exists: the follow-ups the harness is started with are
 * read last before the spawn (with the intent to start it), so one that arrives while the engine reads the
 * conversation so far is given to the execution starting, once, neither lost nor given twice. The engine is held in
 * that read on the same lock. (One that arrives between the follow-ups' read and the start record goes to the next
 * execution: the start takes only the inputs it read, `takeInputsUpTo`; that window holds no read to stop it in.)
 */
test('a follow-up that arrives while the harness is being started is given to the starting execution, once', {
  skip: onPostgres() ? false : 'holding the engine on a lock takes a second connection (PostgreSQL)',
}, async (t) => {
  const database = await createTestDatabase();
  t.after(() => database.drop());
  const hangar = await startTestServer(harnessEnv(), { database });
  t.after(() => hangar.stop());
  const client = new pg.Client({ connectionString: database.databaseUrl });
  client.on('error', () => undefined);
  await client.connect();
  t.after(() => client.end());
  const runId = await createRun(hangar, { prompt: script({ task: true }) });
  await waitForState(hangar, runId, 'SUCCEEDED');

  await client.query('BEGIN');
  await client.query('LOCK TABLE run_transcript IN ACCESS EXCLUSIVE MODE');
  assert.equal((await followup(hangar, runId, 'first')).status, 200);
  await engineWaitsOnTranscript(client);
  assert.equal((await followup(hangar, runId, 'late')).status, 200);
  await client.query('ROLLBACK');

  await eventually('a third execution ran and ended', async () => {
    const run = await hangar.db
      .selectFrom('runs')
      .select(['state', 'execution_id'])
      .where('id', '=', runId)
      .executeTakeFirstOrThrow();
    return run.execution_id === 2 && run.state === 'SUCCEEDED';
  });
  const given = await followupsGiven(client, runId);
  assert.deepEqual(given, { 1: [], 2: ['first', 'late'] });
});

function followup(hangar: TestServer, runId: string, message: string) {
  return hangar.request('POST', `/agent/runs/${runId}/followups`, { body: { message } });
}

/** The follow-ups each execution's harness reported it was started with (the script harness's `task` step). */
async function followupsGiven(client: pg.Client, runId: string): Promise<Record<number, string[]>> {
  const lines = await client.query<{ execution_id: number; line: string }>(
    `SELECT execution_id, line FROM run_transcript WHERE run_id = $1 AND stream = 'output' ORDER BY seq`,
    [runId],
  );
  const given: Record<number, string[]> = {};
  for (const { execution_id: execution, line } of lines.rows) {
    const event = JSON.parse(line) as { type: string; text?: string };
    if (event.type === 'text' && event.text?.startsWith('{"followups"'))
      given[execution] = (JSON.parse(event.text) as { followups: string[] }).followups;
  }
  return given;
}
