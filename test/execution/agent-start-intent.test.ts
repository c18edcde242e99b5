import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import pg from 'pg';
import { RunLifecycle } from '../../src/runs/index.js';
import {
  eventually,
  eventuallySignalled,
  getRun,
  harnessEnv,
  script,
  timelineTypes,
  waitForState,
} from '../support/engine.js';
import { engineWaitsOnTranscript } from '../support/engine-locks.js';
import { privatePostgresUnavailable, startPrivatePostgres } from '../support/private-postgres.js';
import { onPostgres, spawnKeyedServer, stopChild } from '../support/processes.js';
import { createRun } from '../support/runs.js';
import { createTestDatabase, startTestServer } from '../support/server.js';

/**
 * Issue 48 item 6.1: a replica that died after it spawned a harness and before it recorded the start left the run
 * CLAIMED, the takeback queued it as never started, and another replica ran the agent a second time. The intent to
 * start is recorded before the spawn, and a run taken back with it ends ERROR (retryable) instead of running again.
 */
test('a gone engine’s run is queued again without an intent to start its agent, and ends ERROR with one', async (t) => {
  // No engine of the server's own: the test claims the runs as an engine that is gone at once (a lease of 0 s).
  const hangar = await startTestServer(harnessEnv(), { role: 'api' });
  t.after(() => hangar.stop());
  const lifecycle = new RunLifecycle(hangar.db);
  const starting = await createRun(hangar, { prompt: script({ say: 'starting' }) });
  const notStarted = await createRun(hangar, { prompt: script({ say: 'not started' }) });
  const claimed = await lifecycle.claim('engine-that-dies', 0, { global: 10, perTeam: 10 }, 10);
  assert.deepEqual(claimed.map((run) => run.id).sort(), [starting, notStarted].sort());
  const execution = claimed.find((run) => run.id === starting)!.execution_id;
  await lifecycle.beginAgentStarts('engine-that-dies', [{ runId: starting, executionId: execution }]);

  const taken = await lifecycle.takeBack({ graceSeconds: 0 });
  assert.equal(taken.taken, 2);
  assert.deepEqual(taken.errored, [starting]);
  const errored = await getRun(hangar, starting);
  assert.equal(errored.state, 'ERROR');
  assert.equal(errored.status_message.error_code, 'resource_unavailable');
  assert.equal(errored.status_message.retryable, true);
  assert.match(errored.status_message.message, /agent may have run/);
  assert.equal((await getRun(hangar, notStarted)).state, 'QUEUED');
  assert.ok((await timelineTypes(hangar, notStarted)).includes('run_requeued'));
});

test('an intent left by an execution that was queued again does not mark the next one', async (t) => {
  const hangar = await startTestServer(harnessEnv(), { role: 'api' });
  t.after(() => hangar.stop());
  const lifecycle = new RunLifecycle(hangar.db);
  const runId = await createRun(hangar, { prompt: script({ say: 'hi' }) });
  const [first] = await lifecycle.claim('engine-a', 60, { global: 10, perTeam: 10 }, 10);
  await lifecycle.beginAgentStarts('engine-a', [{ runId, executionId: first!.execution_id }]);
  // Its executor knew the harness was never spawned (a database blip before it, a shutdown): queued again.
  await lifecycle.requeue({ id: runId, owner: 'engine-a', executionId: first!.execution_id }, 'test');
  await lifecycle.claim('engine-b', 0, { global: 10, perTeam: 10 }, 10);
  const taken = await lifecycle.takeBack({ graceSeconds: 0 });
  assert.deepEqual(taken.errored, []);
  assert.equal((await getRun(hangar, runId)).state, 'QUEUED');
});

/** Resolves once another session waits for the advisory lock `client` holds. */
async function engineWaitsOnLock(client: pg.Client): Promise<void> {
  await eventually(
    'the engine waits to record the agent’s start',
    async () =>
      (await client.query(`SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`)).rows.length > 0,
  );
}

test('a replica killed between the intent and the start record: its run ends ERROR, and its agent never runs twice', {
  skip: onPostgres() ? false : 'holding the engine inside its start record takes a second connection (PostgreSQL)',
}, async (t) => {
  const database = await createTestDatabase();
  t.after(() => database.drop());
  const marks = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-agent-ran-'));
  t.after(() => fs.rmSync(marks, { recursive: true, force: true }));
  // The harness runs as the run user.
  fs.chmodSync(marks, 0o777);
  // The process sandbox: the harness marks on the host that it ran, as an agent's first act would be.
  const doomed = await spawnKeyedServer(
    database,
    harnessEnv({}, { HANGAR_RUN_LEASE_SECONDS: '3', HANGAR_SANDBOX: 'process' }),
  );
  t.after(() => stopChild(doomed.child, 'SIGKILL'));
  const client = new pg.Client({ connectionString: database.databaseUrl });
  client.on('error', () => undefined);
  await client.connect();
  t.after(() => client.end());
  // The start record (CLAIMED -> INPROGRESS) waits for a lock this test holds: the engine is stopped for real in the
  // gap between the harness process and the record of its start.
  await client.query(`
    CREATE FUNCTION test_hold_agent_start() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN PERFORM pg_advisory_xact_lock(4848); RETURN NEW; END $$`);
  await client.query(`
    CREATE TRIGGER test_hold_agent_start BEFORE UPDATE ON runs FOR EACH ROW
    WHEN (OLD.state = 'CLAIMED' AND NEW.state = 'INPROGRESS') EXECUTE FUNCTION test_hold_agent_start()`);
  await client.query('SELECT pg_advisory_lock(4848)');

  const mark = path.join(marks, 'ran');
  const response = await doomed.hangar.request('POST', '/agent/runs', {
    body: { prompt: script({ write: mark }, { say: 'done' }) },
  });
  assert.equal(response.status, 200);
  const runId = response.body.run_id as string;
  await eventually('the harness ran', () => fs.existsSync(mark));
  await engineWaitsOnLock(client);
  await stopChild(doomed.child, 'SIGKILL');
  // The killed engine's session would record the start once the lock is free: it is ended first, as its process is.
  await client.query(
    `SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND pid <> pg_backend_pid()`,
  );
  await client.query('SELECT pg_advisory_unlock(4848)');
  const row = (
    await client.query<{ state: string; agent_start_intent: number | null; execution_id: number }>(
      'SELECT state, agent_start_intent, execution_id FROM runs WHERE id = $1',
      [runId],
    )
  ).rows[0]!;
  assert.deepEqual(row, { state: 'CLAIMED', agent_start_intent: row.execution_id, execution_id: row.execution_id });
  fs.rmSync(mark);

  const survivor = await startTestServer(doomed.env, { database });
  t.after(() => survivor.stop());
  const run = await waitForState(survivor, runId, 'SUCCEEDED', 'FAILED', 'ERROR', 'QUEUED');
  assert.equal(run.state, 'ERROR', JSON.stringify(run.status_message));
  assert.equal(run.status_message.error_code, 'resource_unavailable');
  assert.equal(run.status_message.retryable, true);
  const types = await timelineTypes(survivor, runId);
  assert.equal(types.filter((type) => type === 'oz_run_claimed').length, 1, types.join(', '));
  assert.ok(!types.includes('agent_started'), types.join(', '));
  assert.equal(fs.existsSync(mark), false, 'the agent ran a second time');
});

/**
 * Issue 48 item 6.2: a database restart during a run's start ended it ERROR "Hangar could not execute the run"
 * (internal_error) though its agent never ran. A blip before the agent puts the run back in the queue. The engine is
 * held in a read before its harness (a follow-up's history, behind a lock on the transcript) while the database
 * stops.
 */
test('a database restart before the agent starts puts the run back in the queue, and it succeeds', {
  skip: !onPostgres() ? 'the private cluster is PostgreSQL' : privatePostgresUnavailable(),
}, async (t) => {
  const cluster = await startPrivatePostgres();
  t.after(() => cluster.destroy());
  const database = await cluster.createDatabase();
  const hangar = await startTestServer(harnessEnv({}, { HANGAR_SETUP_NETWORK: 'false' }), { database });
  t.after(() => hangar.stop());
  const runId = await createRun(hangar, { prompt: script({ say: 'hello' }) });
  await waitForState(hangar, runId, 'SUCCEEDED');

  const client = new pg.Client({ connectionString: database.databaseUrl });
  client.on('error', () => undefined);
  await client.connect();
  await client.query('BEGIN');
  await client.query('LOCK TABLE run_transcript IN ACCESS EXCLUSIVE MODE');
  assert.equal(
    (await hangar.request('POST', `/agent/runs/${runId}/followups`, { body: { message: 'again' } })).status,
    200,
  );
  await engineWaitsOnTranscript(client);
  await cluster.stop('fast');
  await client.end().catch(() => undefined);
  await cluster.start();

  let ended: { state: string; status_message: unknown } | undefined;
  await eventuallySignalled('the follow-up’s execution ended', async () => {
    const row = await hangar.db
      .selectFrom('runs')
      .select(['state', 'execution_id', 'status_message'])
      .where('id', '=', runId)
      .executeTakeFirst()
      .catch(() => undefined);
    if (row && row.execution_id >= 2 && ['SUCCEEDED', 'FAILED', 'ERROR'].includes(row.state)) ended = row;
    return ended !== undefined;
  });
  assert.equal(ended!.state, 'SUCCEEDED', JSON.stringify(ended!.status_message));
  const types = await timelineTypes(hangar, runId);
  assert.ok(types.includes('run_requeued'), types.join(', '));
  assert.ok(!types.includes('oz_run_errored'), types.join(', '));
});
