import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Kysely, sql } from 'kysely';
import type { DB } from '../../src/database.js';
import {
  eventually,
  getRun,
  harnessEnv,
  processesWith,
  script,
  timelineTypes,
  waitForSignalledRun,
} from '../support/engine.js';
import { privatePostgresUnavailable, startPrivatePostgres } from '../support/private-postgres.js';
import { onPostgres, spawnKeyedServer, stopChild } from '../support/processes.js';
import { createTestDatabase, startTestServer, type TestDatabase } from '../support/server.js';

/**
 * Issue 23, items 1 and 2: the runs of an engine that is gone are taken back as soon as that is known, not when
 * their leases pass, and stop holding the concurrency limit; a lease that passes is taken back when it passes.
 * The leases here are far longer than the tests wait, so that only the engine's death can explain a takeback.
 */

const postgresOnly = onPostgres() ? false : 'a replica beside the killed one needs PostgreSQL';
const pgliteOnly = onPostgres() ? 'PGlite: one process per data directory' : false;

/** A server process of its own (to kill), on `database`, with the script harness and a bootstrap API key. */
async function spawnDoomed(database: TestDatabase, env: Record<string, string>) {
  const doomed = await spawnKeyedServer(database, env);
  const create = async (prompt: string) => {
    const response = await doomed.hangar.request('POST', '/agent/runs', { body: { prompt } });
    assert.equal(response.status, 200);
    return response.body.run_id as string;
  };
  return { ...doomed, create };
}

function killAll(marker: string): void {
  for (const pid of processesWith(marker)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
}

/** When the run's takeback (or claim) was written, and the lease it had: both by the database's clock. */
async function eventAt(db: Kysely<DB>, runId: string, type: string): Promise<Date | undefined> {
  const row = await db
    .selectFrom('run_events')
    .select('occurred_at')
    .where('run_id', '=', runId)
    .where('event_type', '=', type)
    .orderBy('seq', 'desc')
    .executeTakeFirst();
  return row ? new Date(row.occurred_at) : undefined;
}

/** The engine whose claim of the run is the latest. */
async function claimedBy(db: Kysely<DB>, runId: string): Promise<string> {
  const row = await db
    .selectFrom('run_events')
    .select('payload')
    .where('run_id', '=', runId)
    .where('event_type', '=', 'oz_run_claimed')
    .orderBy('seq', 'desc')
    .executeTakeFirstOrThrow();
  return (row.payload as { engine: string }).engine;
}

async function leaseOf(db: Kysely<DB>, runId: string): Promise<Date> {
  const row = await db.selectFrom('runs').select('lease_expires_at').where('id', '=', runId).executeTakeFirstOrThrow();
  assert.ok(row.lease_expires_at, `run ${runId} holds a lease`);
  return new Date(row.lease_expires_at);
}

describe('takeback of a SIGKILLed replica', { skip: postgresOnly }, () => {
  test('of three replicas: its runs are taken back long before their lease passes, the others keep theirs, and its slots are claimed', async (t) => {
    const database = await createTestDatabase();
    t.after(() => database.drop());
    const marker = `hangar-takeback-${Date.now()}`;
    t.after(() => killAll(marker));
    // The lease (120 s) is longer than the test waits: a takeback before it can only come from the dead engine.
    const env = harnessEnv(
      {},
      { HANGAR_RUN_LEASE_SECONDS: '120', HANGAR_MAX_CONCURRENT_RUNS: '6', HANGAR_SETUP_NETWORK: 'false' },
    );
    const doomed = await spawnDoomed(database, env);
    t.after(() => stopChild(doomed.child, 'SIGKILL'));
    // Two runs the doomed replica holds for sure (the only engine yet), then two more replicas and four more runs
    // for any of the three: every slot is taken, and a seventh run waits for one.
    const runIds = [
      await doomed.create(script({ sleepers: marker }, { sleep: 300_000 })),
      await doomed.create(script({ sleepers: marker }, { sleep: 300_000 })),
    ];
    const survivor = await startTestServer(doomed.env, { database });
    t.after(() => survivor.stop());
    const third = await startTestServer(doomed.env, { database });
    t.after(() => third.stop());
    for (const runId of runIds) await waitForSignalledRun(survivor, runId, (run) => run.state === 'INPROGRESS');
    for (let i = 0; i < 4; i++) runIds.push(await doomed.create(script({ sleepers: marker }, { sleep: 8000 })));
    for (const runId of runIds) await waitForSignalledRun(survivor, runId, (run) => run.state === 'INPROGRESS');
    const waiting = await doomed.create(script({ say: 'claimed once a slot is free' }));
    const holders = new Map<string, string>();
    for (const runId of runIds) holders.set(runId, await claimedBy(survivor.db, runId));
    const doomedEngine = holders.get(runIds[0]!)!;
    const leases = await Promise.all(runIds.map((runId) => leaseOf(survivor.db, runId)));

    await stopChild(doomed.child as ChildProcess, 'SIGKILL');

    for (const [i, runId] of runIds.entries()) {
      if (holders.get(runId) === doomedEngine) {
        // The dead replica's runs: taken back at once, each once, long before their lease would pass.
        const ended = await waitForSignalledRun(survivor, runId, (run) => run.state === 'ERROR', 60_000);
        assert.equal(ended.status_message.error_code, 'resource_unavailable');
        assert.equal(ended.status_message.retryable, true);
        assert.equal(ended.is_sandbox_running, false);
        const erroredAt = await eventAt(survivor.db, runId, 'oz_run_errored');
        assert.ok(erroredAt && erroredAt < leases[i]!, `run ${runId} taken back before its lease passed`);
      } else {
        // The live replicas' runs are not touched.
        assert.equal(
          (await waitForSignalledRun(survivor, runId, (run) => run.state !== 'INPROGRESS', 60_000)).state,
          'SUCCEEDED',
        );
      }
      const types = await timelineTypes(survivor, runId);
      assert.ok(types.filter((type) => type === 'oz_run_errored' || type === 'oz_run_done').length === 1, `${types}`);
    }
    // The freed slot: the queued run is claimed by a surviving replica and runs to its end.
    assert.equal(
      (await waitForSignalledRun(survivor, waiting, (run) => run.state === 'SUCCEEDED', 60_000)).state,
      'SUCCEEDED',
    );
    const claimedAt = await eventAt(survivor.db, waiting, 'oz_run_claimed');
    assert.ok(claimedAt && claimedAt < leases[0]!, 'the waiting run was claimed before the dead runs leases passed');
    assert.notEqual(await claimedBy(survivor.db, waiting), doomedEngine);
    // The dead engine is forgotten once its runs are taken back; the two live ones stay.
    await eventually(
      'the dead engine forgotten',
      async () => (await survivor.db.selectFrom('engines').select('id').execute()).length === 2,
    );
  });

  test('a replica that stops responding (SIGSTOP) keeps its runs until each lease passes, and loses each then', async (t) => {
    const database = await createTestDatabase();
    t.after(() => database.drop());
    const env = harnessEnv(
      {},
      { HANGAR_RUN_LEASE_SECONDS: '10', HANGAR_MAX_CONCURRENT_RUNS: '12', HANGAR_SETUP_NETWORK: 'false' },
    );
    const doomed = await spawnDoomed(database, env);
    t.after(() => stopChild(doomed.child, 'SIGKILL'));
    const runIds: string[] = [];
    for (let i = 0; i < 12; i++) runIds.push(await doomed.create(script({ sleep: 300_000 })));
    const survivor = await startTestServer(doomed.env, { database });
    t.after(() => survivor.stop());
    for (const runId of runIds) await waitForSignalledRun(survivor, runId, (run) => run.state === 'INPROGRESS');

    // Frozen, not dead: its lock connection stays open, so only the leases can tell. Its runs' leases are set to
    // pass half a second apart over 5.5 s, as an engine that froze between renewals of different runs would leave
    // them: a periodic look (every 5 s before) would find some of them seconds late, whatever its phase.
    doomed.child.kill('SIGSTOP');
    const leases = new Map<string, Date>();
    for (const [i, runId] of runIds.entries()) {
      const row = await sql<{ lease_expires_at: Date }>`
        UPDATE runs SET lease_expires_at = clock_timestamp() + make_interval(secs => ${1 + i * 0.5})
        WHERE id = ${runId} RETURNING lease_expires_at`.execute(survivor.db);
      leases.set(runId, new Date(row.rows[0]!.lease_expires_at));
    }

    for (const runId of runIds) {
      await waitForSignalledRun(survivor, runId, (run) => run.state === 'ERROR', 60_000);
      const erroredAt = (await eventAt(survivor.db, runId, 'oz_run_errored'))!;
      const late = erroredAt.getTime() - leases.get(runId)!.getTime();
      // Not before its lease (the engine looked alive), and when it passed: one second covers a slow statement on
      // a busy machine.
      assert.ok(late >= 0, `run ${runId} taken back ${-late} ms before its lease passed`);
      assert.ok(late < 1000, `run ${runId} taken back ${late} ms after its lease passed`);
    }
  });
});

describe('a PostgreSQL restart', { skip: postgresOnly || privatePostgresUnavailable() }, () => {
  test('takes nothing back from an engine that is alive, though its lock was released and its heartbeat is old', async (t) => {
    const cluster = await startPrivatePostgres();
    t.after(() => cluster.destroy());
    const database = await cluster.createDatabase();
    const env = harnessEnv({}, { HANGAR_RUN_LEASE_SECONDS: '30', HANGAR_SETUP_NETWORK: 'false' });
    const slow = await spawnDoomed(database, env);
    t.after(() => stopChild(slow.child, 'SIGKILL'));
    const runId = await slow.create(script({ sleep: 5000 }, { say: 'finished' }));
    const other = await startTestServer(slow.env, { database });
    t.after(() => other.stop());
    await waitForSignalledRun(other, runId, (run) => run.state === 'INPROGRESS');

    // The engine holding the run is paused across the restart, so that it takes its lock again only after the other
    // replica has looked many times at a free lock and a heartbeat older than two renewals (4 s): only `locked_at`,
    // from before the database server started, says that proves nothing.
    slow.child.kill('SIGSTOP');
    await cluster.stop('fast');
    // Not a wait for an event: the other replica must look at the lock for a while (see above).
    await sleep(6000);
    await cluster.start();
    await eventually(
      'the other replica took its lock again and has looked for gone engines since',
      async () => {
        const rows = await sql<{ looked: boolean }>`
          SELECT heartbeat_at > locked_at + interval '5 seconds' AS looked FROM engines
          WHERE locked_at >= pg_postmaster_start_time()`
          .execute(other.db)
          .catch(() => ({ rows: [] }));
        return rows.rows.some((row) => row.looked);
      },
      60_000,
    );
    assert.equal((await getRun(other, runId)).state, 'INPROGRESS');
    slow.child.kill('SIGCONT');
    const ended = await waitForSignalledRun(
      other,
      runId,
      (run) => !['QUEUED', 'CLAIMED', 'INPROGRESS'].includes(run.state),
      60_000,
    );
    assert.equal(ended.state, 'SUCCEEDED', JSON.stringify(ended.status_message));
  });
});

describe('takeback after a restart on PGlite', { skip: pgliteOnly }, () => {
  test('a SIGKILLed server restarted on the same data directory takes its runs back at once', async (t) => {
    const database = await createTestDatabase();
    t.after(() => database.drop());
    const marker = `hangar-takeback-pglite-${Date.now()}`;
    t.after(() => killAll(marker));
    // The lease (300 s) is longer than the test waits: only knowing the old engine is gone explains a takeback.
    const env = harnessEnv({}, { HANGAR_RUN_LEASE_SECONDS: '300', HANGAR_SETUP_NETWORK: 'false' });
    const doomed = await spawnDoomed(database, env);
    t.after(() => stopChild(doomed.child, 'SIGKILL'));
    const runId = await doomed.create(script({ sleepers: marker }, { sleep: 300_000 }));
    await eventually('the agent is running', () => processesWith(marker).length >= 2);

    await stopChild(doomed.child, 'SIGKILL');
    killAll(marker);
    const restarted = await startTestServer(doomed.env, { database });
    t.after(() => restarted.stop());
    const ended = await waitForSignalledRun(restarted, runId, (run) => run.state === 'ERROR', 60_000);
    assert.equal(ended.status_message.error_code, 'resource_unavailable');
    assert.equal(ended.status_message.retryable, true);
  });
});
