import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { pino } from 'pino';
import { PGLITE_STATISTICS_TARGET, PgliteUpkeep } from '../../src/platform/db/pglite-upkeep.js';
import { tablesNeedingUpkeep, vacuumTables } from '../../src/platform/db/vacuum.js';
import { RequestActivity } from '../../src/platform/http/activity.js';
import { deleteExpiredRuns, RunLifecycle } from '../../src/runs/index.js';
import { eventually } from '../support/engine.js';
import { startTestServer, type TestServer } from '../support/server.js';

// How retention shares the database with the API (issue 29): on PGlite, one connection in the process, a pass
// deletes in short batches, waits for a quiet moment of the API before each, and reclaims the space a table and a
// statement at a time, only where the statistics say so: the heap at once, the indexes when the API is idle.
// PgliteUpkeep's statements are plain SQL, so they are checked on both databases.
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

/** A retention pass over the runs ended more than a day ago, with nothing else to delete (no blobs). */
function deleteEnded(afterDeleting?: () => Promise<void>): Promise<number> {
  return deleteExpiredRuns({
    lifecycle: new RunLifecycle(hangar.db),
    blobs: noBlobs,
    days: 1,
    log: pino({ enabled: false }),
    ...(afterDeleting ? { afterDeleting } : {}),
  });
}

/** Until the deleted runs show in the statistics (PostgreSQL's arrive a moment after the deletes' commit). */
function deletionsInStatistics(): Promise<void> {
  return eventually('the deleted runs show in the statistics', async () =>
    (await tablesNeedingUpkeep(hangar.db)).some((table) => table.table === 'runs' && table.vacuum),
  );
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
  await deleteEnded();
  await deletionsInStatistics();
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

/** The runs table's size on disk, in pages. */
async function runPages(): Promise<number> {
  const result = await sql<{ pages: string }>`SELECT pg_relation_size('runs') / 8192 AS pages`.execute(hangar.db);
  return Number(result.rows[0]!.pages);
}

test('while the API is busy, the vacuum after a pass is the heap-only one: the space is reused at once, the index pass waits for an idle API', async () => {
  let idleMs = 0;
  const statements: string[] = [];
  const upkeep = new PgliteUpkeep(hangar.db, {
    idleMs: () => idleMs,
    idleForIndexCleanupMs: 60_000,
    maxWaitMs: Number.POSITIVE_INFINITY,
    onStatement: (statement) => statements.push(`${statement.statement} ${statement.table}`),
  });
  await deleteEnded();
  await upkeep.vacuum(); // what earlier tests left
  const before = await runPages();
  await endedRuns(2000, 'reused-');
  const full = await runPages();
  await deleteEnded(async () => {
    await deletionsInStatistics();
    statements.length = 0;
    await upkeep.vacuum();
  });
  assert.ok(statements.includes('VACUUM (INDEX_CLEANUP OFF) runs'), JSON.stringify(statements));
  assert.ok(!statements.includes('VACUUM runs'), JSON.stringify(statements));
  assert.ok(upkeep.waitingTables.includes('public.runs'));
  // As many runs again go in the space of the deleted ones: without the VACUUM the table would grow by as many
  // pages as they took the first time. (It grows a little: each deleted row keeps its line pointer until the
  // index pass, so a page holds a few new rows fewer.)
  await endedRuns(2000, 'again-');
  const grown = (await runPages()) - full;
  assert.ok(grown < (full - before) / 4, `grew ${grown} pages; the runs took ${full - before}`);

  // Busy: the index pass still waits.
  statements.length = 0;
  assert.deepEqual(await upkeep.cleanIndexesIfDue(), []);
  assert.ok(upkeep.waitingTables.includes('public.runs'));
  // Idle for long enough: the plain VACUUM, once, of each table left waiting.
  idleMs = 60_000;
  await upkeep.cleanIndexesIfDue();
  assert.ok(statements.includes('VACUUM runs'), JSON.stringify(statements));
  assert.ok(
    statements.every((statement) => statement.startsWith('VACUUM ')),
    JSON.stringify(statements),
  );
  assert.deepEqual(upkeep.waitingTables, []);
  assert.deepEqual(await upkeep.cleanIndexesIfDue(), []);
});

test('an index pass left waiting goes ahead after the longest wait, even with the API busy', async () => {
  const statements: string[] = [];
  const upkeep = new PgliteUpkeep(hangar.db, {
    idleMs: () => 0,
    maxWaitMs: 0,
    onStatement: (statement) => statements.push(`${statement.statement} ${statement.table}`),
  });
  await endedRuns(400, 'overdue-');
  await deleteEnded();
  await deletionsInStatistics();
  await upkeep.vacuum();
  // The heap first, then (already due) the indexes.
  const runs = statements.filter((statement) => statement.endsWith(' runs'));
  assert.deepEqual(
    runs.filter((statement) => statement.startsWith('VACUUM')),
    ['VACUUM (INDEX_CLEANUP OFF) runs', 'VACUUM runs'],
  );
  assert.deepEqual(upkeep.waitingTables, []);
});

test('the idle API gets the full VACUUM at once, and ANALYZE samples with the smaller statistics target', async () => {
  const statements: string[] = [];
  const upkeep = new PgliteUpkeep(hangar.db, {
    idleMs: () => Number.POSITIVE_INFINITY,
    onStatement: (statement) => statements.push(`${statement.statement} ${statement.table}`),
  });
  await endedRuns(1000, 'sampled-');
  await deleteEnded();
  await endedRuns(1000, 'kept-');
  await sql`UPDATE runs SET ended_at = now() WHERE id LIKE 'kept-%'`.execute(hangar.db);
  await eventually('the changes show in the statistics', async () =>
    (await tablesNeedingUpkeep(hangar.db)).some((table) => table.table === 'runs' && table.analyze),
  );
  await upkeep.vacuum();
  assert.ok(statements.includes('VACUUM runs'), JSON.stringify(statements));
  assert.ok(statements.includes('ANALYZE runs'), JSON.stringify(statements));
  assert.deepEqual(upkeep.waitingTables, []);
  // At most target + 1 histogram bounds (PostgreSQL's default target, 100, would give 101 for 1000 distinct ids).
  const bounds = await sql<{ bounds: number }>`
    SELECT array_length(histogram_bounds::text::text[], 1) AS bounds FROM pg_stats
    WHERE schemaname = 'public' AND tablename = 'runs' AND attname = 'id'`.execute(hangar.db);
  assert.equal(bounds.rows[0]?.bounds, PGLITE_STATISTICS_TARGET + 1);
  // The setting was for the ANALYZE alone.
  const setting = await sql<{ target: string }>`SELECT current_setting('default_statistics_target') AS target`.execute(
    hangar.db,
  );
  assert.equal(setting.rows[0]?.target, '100');
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
    assert.equal(activity.idleMs, 0);
    let quiet = false;
    const waited = activity.quiet(60_000).then(() => (quiet = true));
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(quiet, false);
    pending[0]!.end('done');
    await waited;
    assert.equal(await answered, 'done');
    assert.equal(activity.busy, false);
    // Idle since that request ended, and more so as time goes.
    const idle = activity.idleMs;
    await eventually('the idle time grows', () => activity.idleMs > idle);

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
