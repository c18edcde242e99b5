/**
 * Scheduler benchmark: 10,000 enabled schedules due in the same second on PostgreSQL. Reports the delay from
 * each tick's due time to its run's creation (p50, p99, max) and the scheduler's CPU time, beside a baseline
 * measured in the same run: one hand-written INSERT ... SELECT that creates the same 10,000 runs in a single
 * statement (the floor: no claiming, no per-schedule checks, no timeline events). Target: p99 under 1 s.
 *
 *   npm run bench:scheduler    (BENCH_SCHEDULES=10000 BENCH_ENGINES=2 [BENCH_BATCH=1000] BENCH_DATABASE_URL=postgres://...)
 */
import os from 'node:os';
import { type Kysely, sql } from 'kysely';
import { loadConfig } from '../../src/config.js';
import type { DB } from '../../src/database.js';
import { Scheduler } from '../../src/schedules/scheduler.js';
import { startServer } from '../../src/server.js';
import { createScratchDatabase } from '../runs-api/database.js';
import { watchCpu } from '../runs-api/machine.js';

const COUNT = Number(process.env.BENCH_SCHEDULES ?? 10_000);
const ENGINES = Number(process.env.BENCH_ENGINES ?? 2);
const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
/** Unset: the scheduler's own defaults (batch size and batches in flight). */
const BATCH = process.env.BENCH_BATCH ? Number(process.env.BENCH_BATCH) : undefined;
const LEAD_MS = 4000;

interface Delays {
  runs: number;
  p50: number;
  p99: number;
  max: number;
}

/** Delay of every run of the given tick, from the tick to the run's creation, in milliseconds. */
async function delays(db: Kysely<DB>, tick: Date, source: string): Promise<Delays> {
  const row = await sql<{ runs: string; p50: number; p99: number; max: number }>`
    SELECT count(*) AS runs,
      percentile_cont(0.5) WITHIN GROUP (ORDER BY delay) AS p50,
      percentile_cont(0.99) WITHIN GROUP (ORDER BY delay) AS p99,
      max(delay) AS max
    FROM (SELECT extract(epoch FROM created_at - ${tick.toISOString()}::timestamptz) * 1000 AS delay
          FROM runs WHERE schedule_tick = ${tick.toISOString()}::timestamptz AND source = ${source}) d`.execute(db);
  const r = row.rows[0]!;
  return { runs: Number(r.runs), p50: Number(r.p50), p99: Number(r.p99), max: Number(r.max) };
}

/** The next whole second at least LEAD_MS away: every schedule's tick. */
function nextTick(): Date {
  return new Date(Math.ceil((Date.now() + LEAD_MS) / 1000) * 1000);
}

async function seedSchedules(db: Kysely<DB>, tick: Date): Promise<void> {
  await sql`
    INSERT INTO schedules (id, team_uid, name, cron_schedule, prompt, enabled, metadata, scope_type, scope_uid,
                           created_by_uid, updated_by_uid, next_run_at)
    SELECT gen_random_uuid()::text, t.uid, 'bench ' || g, '* * * * *', 'Scheduled benchmark run ' || g, true,
           '{}', 'Team', t.uid, m.user_uid, m.user_uid, ${tick.toISOString()}::timestamptz
    FROM generate_series(1, ${COUNT}) g
    CROSS JOIN (SELECT uid FROM teams WHERE name = 'default') t
    CROSS JOIN (SELECT user_uid FROM team_members LIMIT 1) m`.execute(db);
}

/** Polls with a bare count (an index scan), so that the waiting costs the database as little as possible. */
async function runsOfTick(db: Kysely<DB>, tick: Date, source: string): Promise<number> {
  const row = await sql<{ runs: string }>`
    SELECT count(*) AS runs FROM runs WHERE schedule_tick = ${tick.toISOString()}::timestamptz AND source = ${source}`.execute(
    db,
  );
  return Number(row.rows[0]!.runs);
}

async function waitForRuns(db: Kysely<DB>, tick: Date, source: string): Promise<void> {
  const deadline = Date.now() + 120_000;
  while ((await runsOfTick(db, tick, source)) < COUNT) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${COUNT} ${source} runs`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Baseline: at the tick, one statement creates a run for every schedule. */
async function baseline(db: Kysely<DB>): Promise<Delays> {
  const tick = nextTick();
  await new Promise((resolve) => setTimeout(resolve, tick.getTime() - Date.now()));
  await sql`
    INSERT INTO runs (id, team_uid, title, prompt, state, source, execution_location, scope_type, scope_uid,
                      creator_type, creator_uid, executor_type, executor_uid, schedule_id, schedule_tick)
    SELECT gen_random_uuid()::text, s.team_uid, s.name, s.prompt, 'QUEUED', 'API', 'REMOTE', 'Team', s.team_uid,
           'user', s.created_by_uid, 'user', s.created_by_uid, s.id, ${tick.toISOString()}::timestamptz
    FROM schedules s`.execute(db);
  return delays(db, tick, 'API');
}

async function main(): Promise<void> {
  const scratch = await createScratchDatabase(ADMIN_URL);
  const server = await startServer(
    loadConfig({
      PORT: '0',
      HANGAR_LOG_LEVEL: 'silent',
      DATABASE_URL: scratch.url,
      HANGAR_DATA_DIR: os.tmpdir(),
      HANGAR_DB_POOL_SIZE: '10',
    }),
    { logger: false, role: 'api' },
  );
  const db = server.database.db;
  try {
    const tick = nextTick();
    await seedSchedules(db, tick);
    const engines = Array.from(
      { length: ENGINES },
      () =>
        new Scheduler({ db, runs: server.services.runs, log: server.app.log, ...(BATCH ? { batchSize: BATCH } : {}) }),
    );
    const cpuBefore = process.cpuUsage();
    const stopWatch = watchCpu(0, []);
    for (const engine of engines) engine.start();
    await waitForRuns(db, tick, 'SCHEDULED_AGENT');
    const cpu = process.cpuUsage(cpuBefore);
    const machine = stopWatch?.();
    await Promise.all(engines.map((engine) => engine.stop()));
    const ours = await delays(db, tick, 'SCHEDULED_AGENT');
    const floor = await baseline(db);

    const ms = (value: number) => `${value.toFixed(0)} ms`;
    const lines = [
      `scheduler: ${COUNT} schedules due at one tick, ${ENGINES} scheduler loop(s), PostgreSQL, ${os.cpus().length} cores`,
      `                      runs     p50       p99       max`,
      `  hangar scheduler  ${String(ours.runs).padStart(6)}  ${ms(ours.p50).padStart(8)}  ${ms(ours.p99).padStart(8)}  ${ms(ours.max).padStart(8)}`,
      `  baseline (1 stmt) ${String(floor.runs).padStart(6)}  ${ms(floor.p50).padStart(8)}  ${ms(floor.p99).padStart(8)}  ${ms(floor.max).padStart(8)}`,
      `  scheduler CPU: ${((cpu.user + cpu.system) / 1000).toFixed(0)} ms (Node process, from start to the last run)` +
        (machine
          ? `; PostgreSQL meanwhile ${(machine.postgresSeconds * 1000).toFixed(0)} ms (all its processes, waiting included)`
          : ''),
      `  p99 ratio ours/baseline: ${(ours.p99 / floor.p99).toFixed(1)}; target p99 < 1000 ms: ${ours.p99 < 1000 ? 'met' : 'NOT met'}`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await server.stop();
    await scratch.drop();
  }
}

await main();
