import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { pino } from 'pino';
import { tablesNeedingUpkeep, vacuumTables } from '../../src/platform/db/vacuum.js';
import { RequestActivity } from '../../src/platform/http/activity.js';
import { deleteExpiredRuns, RunLifecycle } from '../../src/runs/index.js';
import { eventually } from '../support/engine.js';
import { startTestServer, type TestServer } from '../support/server.js';

// How retention shares the database with the API (issue 29): on PGlite, one connection in the process, a pass
// deletes in short batches, waits for a quiet moment of the API before each, and reclaims the space a table and a
// statement at a time, only where the statistics say so.
const noBlobs = { delete: async () => undefined } as never;
let hangar: TestServer;

before(async () => {
  hangar = await startTestServer();
});
after(async () => {
  await hangar?.stop();
});

/** `count` runs that ended a year ago, straight into the table (the way the benchmarks seed). */
async function endedRuns(count: number, prefix: string): Promise<void> {
  const member = await hangar.db.selectFrom('team_members').select(['team_uid', 'user_uid']).executeTakeFirstOrThrow();
  await sql`
    INSERT INTO runs (id, team_uid, title, prompt, state, source, execution_location, scope_type, scope_uid,
      agent_config, creator_type, creator_uid, executor_type, executor_uid, metadata, created_at, updated_at,
      started_at, ended_at)
    SELECT ${prefix} || g, ${member.team_uid}, 'old', 'old', 'SUCCEEDED', 'API', 'REMOTE', 'Team', ${member.team_uid},
      '{}'::jsonb, 'user', ${member.user_uid}, 'user', ${member.user_uid}, '{}'::jsonb,
      now() - interval '1 year', now() - interval '1 year', now() - interval '1 year', now() - interval '1 year'
    FROM generate_series(1, ${count}::int) AS g`.execute(hangar.db);
}

test('a timed pass deletes in batches and waits for a quiet moment of the API before each one after the first', async () => {
  await endedRuns(60, 'paced-');
  const steps: string[] = [];
  let release!: () => void;
  let held = false;
  let firstWait!: () => void;
  const waiting = new Promise<void>((resolve) => (firstWait = resolve));
  const pass = deleteExpiredRuns({
    lifecycle: new RunLifecycle(hangar.db),
    blobs: noBlobs,
    days: 1,
    log: pino({ enabled: false }),
    batch: 25,
    targetBatchMs: 1_000_000,
    pauseMs: 0,
    onBatch: (batch) => steps.push(`batch ${batch.runs}`),
    whenQuiet: () => {
      steps.push('quiet');
      if (held) return Promise.resolve();
      held = true;
      firstWait();
      return new Promise<void>((resolve) => (release = resolve));
    },
  });
  // Held at its first wait: no batch goes while the API is busy, and the database answers the API meanwhile.
  await waiting;
  assert.deepEqual(steps, ['batch 20', 'quiet']);
  const listed = await hangar.request('GET', '/agent/runs?limit=5');
  assert.equal(listed.status, 200);
  assert.deepEqual(steps, ['batch 20', 'quiet']);
  release();
  assert.equal(await pass, 60);
  // Its first batch is small (a run's cost is not known yet), then twice as large each time up to `batch`.
  assert.deepEqual(steps, ['batch 20', 'quiet', 'batch 25', 'quiet', 'batch 15']);
});

test('the vacuum goes a table at a time where the statistics call for it, and leaves the others alone', async () => {
  await endedRuns(400, 'vacuumed-');
  await deleteExpiredRuns({
    lifecycle: new RunLifecycle(hangar.db),
    blobs: noBlobs,
    days: 1,
    log: pino({ enabled: false }),
  });
  // PostgreSQL's statistics arrive a moment after the deletes' commit.
  await eventually('the deleted runs show in the statistics', async () =>
    (await tablesNeedingUpkeep(hangar.db)).some((table) => table.table === 'runs' && table.vacuum),
  );
  const statements = await vacuumTables(hangar.db, { pauseMs: 0 });
  const tables = new Set(statements.map((statement) => statement.table));
  assert.ok(
    statements.some((statement) => statement.table === 'runs' && statement.statement === 'VACUUM'),
    JSON.stringify(statements),
  );
  // One statement per table and kind: never the whole database at once.
  assert.equal(statements.length, new Set(statements.map((s) => `${s.statement} ${s.table}`)).size);
  assert.ok(!tables.has('instance_settings'), 'a table nobody wrote to since is left alone');
  await eventually('the runs table needs no VACUUM afterwards', async () =>
    (await tablesNeedingUpkeep(hangar.db)).every((table) => table.table !== 'runs' || !table.vacuum),
  );
});

test('the API is quiet when no request is in flight; a request in flight for long is a stream and does not count', async () => {
  const pending: http.ServerResponse[] = [];
  const server = http.createServer((_request, response) => pending.push(response));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  try {
    const activity = new RequestActivity(60_000);
    activity.track(server);
    assert.equal(activity.busy, false);
    const answered = fetch(url).then((response) => response.text());
    await eventually('the request arrived', () => pending.length === 1);
    assert.equal(activity.busy, true);
    let quiet = false;
    const waited = activity.quiet(60_000).then(() => (quiet = true));
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(quiet, false);
    pending[0]!.end('done');
    await waited;
    assert.equal(await answered, 'done');
    assert.equal(activity.busy, false);

    // Counted as a stream from the start (0 ms): a live event stream left open never holds the chores back.
    const streams = new RequestActivity(0);
    streams.track(server);
    const stream = fetch(url).catch(() => undefined);
    await eventually('the stream arrived', () => pending.length === 2);
    assert.equal(streams.busy, false);
    await streams.quiet(60_000);
    pending[1]!.end();
    await stream;
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});
