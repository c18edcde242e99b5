// Run retention under load: the runs list's latency while retention deletes ~100k ended runs, beside the same
// list measured just before on the same server and data (the baseline). On PostgreSQL and on PGlite.
// `npm run bench:retention`; BENCH_RUNS (default 112000: about 100k of them ended) and BENCH_RATE (list requests
// per second, default 50). Figures go in bench/RESULTS.md (Run retention).
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { loadConfig } from '../../src/config.js';
import { deleteExpiredRuns, RunLifecycle } from '../../src/runs/index.js';
import { startServer } from '../../src/server.js';
import { createScratchDatabase, defaultOwner, kyselyQuery } from '../runs-api/database.js';
import { seedRuns } from '../runs-api/seed.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 112_000);
const RATE = Number(process.env.BENCH_RATE ?? 50);
const DAY = 86_400_000;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? Number.NaN;
}

/** Lists the first page at a fixed rate until `until` settles; the latencies in ms, sorted (`failed`: non-200s). */
async function listAtRate(
  url: string,
  apiKey: string,
  until: Promise<unknown>,
): Promise<number[] & { failed?: number }> {
  const latencies: number[] & { failed?: number } = [];
  latencies.failed = 0;
  const inFlight: Promise<void>[] = [];
  let done = false;
  void until.finally(() => (done = true));
  while (!done) {
    const started = performance.now();
    inFlight.push(
      fetch(`${url}/api/v1/agent/runs?limit=20`, { headers: { authorization: `Bearer ${apiKey}` } }).then(
        async (response) => {
          await response.arrayBuffer();
          if (response.status === 200) latencies.push(performance.now() - started);
          else latencies.failed! += 1;
        },
      ),
    );
    await new Promise((resolve) => setTimeout(resolve, 1000 / RATE));
  }
  await Promise.all(inFlight);
  latencies.sort((a, b) => a - b);
  return latencies;
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
    await seedRuns(kyselyQuery(db), { teamUid: owner.teamUid, userUids: [owner.userUid] }, 1, RUNS);
    const baseline = await listAtRate(server.url, apiKey, new Promise((resolve) => setTimeout(resolve, 10_000)));
    const started = performance.now();
    const deleting = deleteExpiredRuns({
      lifecycle: new RunLifecycle(db),
      blobs: { delete: async () => undefined } as never,
      days: 1,
      log: pino({ enabled: false }),
      now: () => new Date(Date.now() + 30 * DAY),
    });
    const during = await listAtRate(server.url, apiKey, deleting);
    const deleted = await deleting;
    const seconds = (performance.now() - started) / 1000;
    const ms = (value: number) => `${value.toFixed(1)} ms`;
    return `| ${database} | ${RUNS} | ${deleted} | ${seconds.toFixed(1)} s (${Math.round(deleted / seconds)} runs/s) | ${ms(percentile(baseline, 50))} / ${ms(percentile(baseline, 99))} | ${ms(percentile(during, 50))} / ${ms(percentile(during, 99))} | ${ms(during.at(-1)!)} | ${baseline.failed} / ${during.failed} |`;
  } finally {
    await server.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

const rows = [
  '| database | runs seeded | runs deleted | deletion | list p50 / p99 before (baseline) | list p50 / p99 while deleting | slowest list while deleting |',
  '|---|---:|---:|---:|---:|---:|---:|',
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
