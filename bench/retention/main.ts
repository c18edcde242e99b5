// Run retention under load: the runs list's latency while retention deletes ~100k ended runs, beside the same
// list measured just before on the same server and data (the baseline). On PostgreSQL and on PGlite.
// `npm run bench:retention`; BENCH_RUNS (default 112000: about 100k of them ended) and BENCH_RATE (list requests
// per second, default 50). Figures go in bench/RESULTS.md (Run retention).
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { pino } from 'pino';
import { loadConfig } from '../../src/config.js';
import { deleteExpiredRuns, RunLifecycle } from '../../src/runs/index.js';
import { startServer } from '../../src/server.js';
import { createScratchDatabase, defaultOwner, kyselyQuery } from '../runs-api/database.js';
import { seedRuns } from '../runs-api/seed.js';
import { getOk, percentile, type Sample, sampleAtRate } from '../support/latency.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 112_000);
const RATE = Number(process.env.BENCH_RATE ?? 50);
const DAY = 86_400_000;

/** The first page of the runs list, at BENCH_RATE requests per second until `until` settles. */
function listAtRate(url: string, apiKey: string, until: Promise<unknown>): Promise<Sample> {
  return sampleAtRate({
    request: getOk(`${url}/api/v1/agent/runs?limit=20`, { authorization: `Bearer ${apiKey}` }),
    ratePerSecond: RATE,
    until,
  });
}

async function measure(database: 'PostgreSQL' | 'PGlite', databaseUrl: string | undefined): Promise<string> {
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
  try {
    const db = server.database.db;
    const owner = await defaultOwner(db);
    const seeded = await seedRuns(kyselyQuery(db), { teamUid: owner.teamUid, userUids: [owner.userUid] }, 1, RUNS);
    await sql`ANALYZE runs`.execute(db);
    console.error(
      `${database}: ${RUNS} runs seeded in SQL (${seeded.insertSeconds} s, indexes ${seeded.indexSeconds} s)`,
    );
    const baseline = await listAtRate(server.url, apiKey, new Promise((resolve) => setTimeout(resolve, 10_000)));
    const started = performance.now();
    const deleting = deleteExpiredRuns({
      lifecycle: new RunLifecycle(db),
      blobs: { delete: async () => undefined } as never,
      days: 1,
      log: pino({ enabled: false }),
      now: () => new Date(Date.now() + 30 * DAY),
      // As the server's loop does: PGlite has no autovacuum.
      afterDeleting: async () => {
        if (database === 'PGlite') await sql`VACUUM (ANALYZE)`.execute(db);
      },
    });
    const during = await listAtRate(server.url, apiKey, deleting);
    const deleted = await deleting;
    const seconds = (performance.now() - started) / 1000;
    const ms = (value: number) => `${value.toFixed(1)} ms`;
    const figures = (sample: Sample) =>
      `${ms(percentile(sample.latencies, 50))} / ${ms(percentile(sample.latencies, 99))}`;
    return `| ${database} | ${RUNS} | ${deleted} | ${seconds.toFixed(1)} s (${Math.round(deleted / seconds)} runs/s) | ${figures(baseline)} | ${figures(during)} | ${ms(during.latencies.at(-1)!)} | ${baseline.failed} / ${during.failed} |`;
  } finally {
    await server.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

const rows = [
  '| database | runs seeded | runs deleted | deletion | list p50 / p99 before (baseline) | list p50 / p99 while deleting | slowest list while deleting | failed lists before / during |',
  '|---|---:|---:|---:|---:|---:|---:|---:|',
];
const scratch = await createScratchDatabase(
  process.env.BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test',
);
try {
  rows.push(await measure('PostgreSQL', scratch.url));
} finally {
  await scratch.drop();
}
rows.push(await measure('PGlite', undefined));
console.log(rows.join('\n'));
