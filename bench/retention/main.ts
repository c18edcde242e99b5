// Run retention under load: the runs list's latency while retention deletes ~100k ended runs, beside the same list
// on the same server when nothing is deleted (idle), on PostgreSQL and on PGlite. Interleaved: idle, a pass
// deleting the older half of the ended runs, idle, a pass deleting the other half, idle (PGlite: then the index
// pass the passes' heap-only VACUUMs left, made at once, and idle); so load from others on a shared machine biases
// both sides alike. `npm run bench:retention`; BENCH_RUNS (default 224000: two passes of
// about 100k ended runs each), BENCH_RATE (list requests per second, default 50), BENCH_IDLE_SECONDS (10).
// Figures go in bench/RESULTS.md (Run retention).
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { pino } from 'pino';
import { loadConfig } from '../../src/config.js';
import { PgliteUpkeep } from '../../src/platform/db/pglite-upkeep.js';
import { type VacuumStatement, vacuumTables } from '../../src/platform/db/vacuum.js';
import { RequestActivity } from '../../src/platform/http/activity.js';
import { deleteExpiredRuns, PGLITE_BATCH_MS, RunLifecycle } from '../../src/runs/index.js';
import { startServer } from '../../src/server.js';
import { createScratchDatabase, defaultOwner, kyselyQuery } from '../runs-api/database.js';
import { seedRuns } from '../runs-api/seed.js';
import { getOk, percentile, type Sample, sampleAtRate } from '../support/latency.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 224_000);
const RATE = Number(process.env.BENCH_RATE ?? 50);
const IDLE_MS = Number(process.env.BENCH_IDLE_SECONDS ?? 10) * 1000;
const DAY = 86_400_000;

const ms = (value: number) => `${value.toFixed(1)} ms`;
const figures = (sample: Sample) => `${ms(percentile(sample.latencies, 50))} / ${ms(percentile(sample.latencies, 99))}`;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)]!;

/** Several samples as one (their latencies pooled). */
function pooled(samples: Sample[]): Sample {
  return {
    latencies: samples.flatMap((sample) => sample.latencies).sort((a, b) => a - b),
    failed: samples.reduce((sum, sample) => sum + sample.failed, 0),
  };
}

interface Pass {
  deleted: number;
  seconds: number;
  during: Sample;
  batches: Array<{ runs: number; ms: number }>;
  vacuum: VacuumStatement[];
}

async function measure(database: 'PostgreSQL' | 'PGlite', databaseUrl: string | undefined): Promise<string[]> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-bench-retention-'));
  const apiKey = `hgr_bench_${randomBytes(16).toString('hex')}`;
  const server = await startServer(
    loadConfig({
      PORT: '0',
      HOST: '127.0.0.1',
      HANGAR_DATA_DIR: dataDir,
      HANGAR_BOOTSTRAP_API_KEY: apiKey,
      HANGAR_LOG_LEVEL: 'silent',
      ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    }),
  );
  // The first page of the runs list at BENCH_RATE a second until `until` settles, each request timed from when it
  // was due (the PGlite server shares this process's event loop: a stall also delays the sending).
  const list = (until: Promise<unknown>) =>
    sampleAtRate({
      request: getOk(`${server.url}/api/v1/agent/runs?limit=20`, { authorization: `Bearer ${apiKey}` }),
      ratePerSecond: RATE,
      until,
      fromSchedule: true,
    });
  const activity = new RequestActivity();
  activity.track(server.app.server);
  const idle = () => list(new Promise((resolve) => setTimeout(resolve, IDLE_MS)));
  try {
    const db = server.database.db;
    const owner = await defaultOwner(db);
    const seeded = await seedRuns(kyselyQuery(db), { teamUid: owner.teamUid, userUids: [owner.userUid] }, 1, RUNS);
    // Everything else as the server leaves it after its own upkeep (PGlite: the periodic vacuum).
    if (database === 'PGlite') await vacuumTables(db);
    else await sql`VACUUM (ANALYZE) runs`.execute(db);
    const half = await sql<{ at: Date }>`
      SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY ended_at) AS at FROM runs WHERE ended_at IS NOT NULL`.execute(
      db,
    );
    console.error(
      `${database}: ${RUNS} runs seeded in SQL (${seeded.insertSeconds} s, indexes ${seeded.indexSeconds} s)`,
    );
    // PGlite's vacuum as the server makes it (src/app/loops.ts): the benchmark's lists never leave the API idle
    // for long, so after a pass the VACUUM is the heap-only one and the index pass waits (see PgliteUpkeep).
    let vacuum: VacuumStatement[] = [];
    let forceIndexPass = false;
    const upkeep = new PgliteUpkeep(db, {
      idleMs: () => (forceIndexPass ? Number.POSITIVE_INFINITY : activity.idleMs),
      whenQuiet: () => activity.quiet(1000),
      onStatement: (statement) => vacuum.push(statement),
    });
    // A pass as the server's loop makes it (src/app/loops.ts), deleting the runs ended before `endedBefore`.
    const pass = async (endedBefore: Date): Promise<Pass> => {
      const batches: Pass['batches'] = [];
      vacuum = [];
      const started = performance.now();
      const deleting = deleteExpiredRuns({
        lifecycle: new RunLifecycle(db),
        blobs: { delete: async () => undefined } as never,
        days: 1,
        log: pino({ enabled: false }),
        now: () => new Date(endedBefore.getTime() + DAY),
        onBatch: (batch) => batches.push(batch),
        // As the server does on PGlite (src/app/loops.ts).
        ...(database === 'PGlite' ? { targetBatchMs: PGLITE_BATCH_MS, whenQuiet: () => activity.quiet(1000) } : {}),
        afterDeleting: async () => {
          if (database === 'PGlite') await upkeep.vacuum();
        },
      });
      const during = await list(deleting);
      const deleted = await deleting;
      return { deleted, seconds: (performance.now() - started) / 1000, during, batches, vacuum };
    };
    // The index pass the heap-only VACUUMs left (PGlite), made at once as if the API had been idle for long
    // enough, with the lists still going: what a request that arrives during it waits.
    const indexPass = async (): Promise<Pass> => {
      vacuum = [];
      const started = performance.now();
      forceIndexPass = true;
      const cleaning = upkeep.cleanIndexesIfDue();
      const during = await list(cleaning);
      await cleaning;
      return { deleted: 0, seconds: (performance.now() - started) / 1000, during, batches: [], vacuum };
    };
    await list(new Promise((resolve) => setTimeout(resolve, 3000))); // warm-up: plans, caches, JIT
    const idles = [await idle()];
    const passes: Array<Pass & { label: string }> = [{ label: '1', ...(await pass(half.rows[0]!.at)) }];
    idles.push(await idle());
    passes.push({ label: '2', ...(await pass(new Date(Date.now() + 30 * DAY))) });
    idles.push(await idle());
    if (database === 'PGlite') {
      passes.push({ label: 'index pass (deferred)', ...(await indexPass()) });
      idles.push(await idle());
    }
    const rows: string[] = [];
    passes.forEach((done, index) => {
      const batchMs = done.batches.map((batch) => batch.ms);
      const sizes = done.batches.map((batch) => batch.runs);
      const longest = done.vacuum.reduce<VacuumStatement | undefined>((a, b) => (a && a.ms >= b.ms ? a : b), undefined);
      const deletion =
        done.deleted > 0
          ? `${done.seconds.toFixed(1)} s (${Math.round(done.deleted / done.seconds)} runs/s)`
          : `${done.seconds.toFixed(1)} s`;
      const batches =
        done.batches.length > 0
          ? `${done.batches.length} batches of ${median(sizes)} runs (median), ${ms(median(batchMs))} median, ${ms(Math.max(...batchMs))} longest`
          : '';
      const vacuumed = longest
        ? `${done.vacuum.length} statements, ${ms(done.vacuum.reduce((sum, s) => sum + s.ms, 0))} in all; longest ${longest.statement} ${longest.table} ${ms(longest.ms)}`
        : database === 'PGlite'
          ? 'none'
          : 'none (autovacuum)';
      rows.push(
        `| ${database} | ${done.label} | ${done.deleted} | ${deletion} | ${batches} | ${figures(idles[index]!)} | ${figures(done.during)} | ${ms(done.during.latencies.at(-1)!)} | ${vacuumed} | ${idles[index]!.failed} / ${done.during.failed} |`,
      );
      for (const statement of done.vacuum)
        console.error(`${database} ${done.label}: ${statement.statement} ${statement.table} ${ms(statement.ms)}`);
    });
    const all = pooled(idles);
    rows.push(
      `| ${database} | idle (${idles.length} windows pooled) | | | | ${figures(all)} | | ${ms(all.latencies.at(-1)!)} | | ${all.failed} |`,
    );
    return rows;
  } finally {
    await server.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

// Each database's rows as soon as they are measured (a long run on a shared machine keeps what it got).
console.log(
  [
    '| database | pass | runs deleted | deletion (with its vacuum) | batches | list p50 / p99 idle before | list p50 / p99 while deleting | slowest list while deleting | PGlite vacuum after the pass | failed lists idle / deleting |',
    '|---|---:|---:|---:|---|---:|---:|---:|---|---:|',
  ].join('\n'),
);
const databases = (process.env.BENCH_DATABASES ?? 'PostgreSQL,PGlite').split(',');
if (databases.includes('PostgreSQL')) {
  const scratch = await createScratchDatabase(
    process.env.BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test',
  );
  try {
    console.log((await measure('PostgreSQL', scratch.url)).join('\n'));
  } finally {
    await scratch.drop();
  }
}
if (databases.includes('PGlite')) console.log((await measure('PGlite', undefined)).join('\n'));
