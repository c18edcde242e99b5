// Benchmark of the overview's aggregates (GET /api/v1/overview) at 1M runs, beside baselines measured in the same
// run: the runs list's first page (an ordinary request of the same server), one bare `count(*)` of the team's runs
// created in the window, and the same figures aggregated from the runs themselves (`runOverview(..., { from:
// 'runs' })`, what the overview did before the hourly rollup of migration 0027). The whole table is in the 7-day
// window (the worst case), a tenth of it in the last 24 hours, and a second team's runs are in the table too. The
// seed inserts ended runs, so the triggers leave their changes to fold: the first request folds them (timed once).
// See bench/README.md ("overview") and bench/RESULTS.md.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { loadConfig } from '../../src/config.js';
import { runOverview } from '../../src/runs/index.js';
import { startServer } from '../../src/server.js';
import { createScratchDatabase, defaultOwner, poolQuery, type Query } from '../runs-api/database.js';
import { withRunIndexesRebuilt } from '../runs-api/seed.js';
import { percentile, timeSequentially } from '../support/latency.js';

const wholeNumber = (name: string, fallback: number) => {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a whole number above 0`);
  return value;
};
const settings = {
  databaseUrl: process.env.BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test',
  runs: wholeNumber('BENCH_RUNS', 1_000_000),
  /** Requests per scenario, one at a time (the overview is one person's page, polled every 30 s). */
  requests: wholeNumber('BENCH_REQUESTS', 30),
  /**
   * Runs created in the last BENCH_OPEN_HOURS hours are still going one in ten (QUEUED or INPROGRESS); older ones
   * have all ended. 168: one run in ten of the whole 7 days still going, the worst case for the runs still going.
   */
  openHours: wholeNumber('BENCH_OPEN_HOURS', 1),
};

const cleanups: (() => Promise<unknown>)[] = [];
async function cleanUp(): Promise<void> {
  for (let next = cleanups.pop(); next; next = cleanups.pop()) await next().catch((error) => console.error(error));
}
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(signal, () => void cleanUp().finally(() => process.exit(130)));

/**
 * `count` runs of `teamUid`, created evenly over the last 7 days up to now, set-based. States, sources, models,
 * error codes and costs rotate with g; one run in 50 belongs to one of 20 schedules.
 */
async function seed(query: Query, teamUid: string, userUid: string, count: number): Promise<void> {
  await query(
    `INSERT INTO runs (id, team_uid, title, prompt, state, source, execution_location, scope_type, scope_uid,
                       agent_config, model_id, creator_type, creator_uid, executor_type, executor_uid, metadata,
                       schedule, schedule_id, schedule_tick, status_message, request_usage,
                       created_at, updated_at, started_at, ended_at)
     SELECT md5($1 || g)::uuid::text, $1, 'Run ' || g, 'prompt ' || g, r.state,
            CASE WHEN r.schedule IS NULL THEN 'API' ELSE 'SCHEDULED_AGENT' END, 'REMOTE', 'Team', $1,
            jsonb_build_object('model_id', r.model), r.model, 'user', $2, 'user', $2, '{}'::jsonb,
            CASE WHEN r.schedule IS NOT NULL THEN jsonb_build_object('schedule_id', r.schedule,
              'schedule_name', 'Schedule ' || r.schedule, 'cron_schedule', '*/5 * * * *') END,
            r.schedule, CASE WHEN r.schedule IS NOT NULL THEN r.created_at END,
            CASE WHEN r.state IN ('FAILED', 'ERROR') THEN jsonb_build_object('message', 'failed',
              'error_code', (ARRAY['tests_failed', 'environment_setup_failed', 'budget_exceeded'])[1 + g % 3]) END,
            CASE WHEN r.started THEN jsonb_build_object('input_tokens', 1000, 'output_tokens', 200,
              'inference_cost', 0.0001 * (1 + g % 50)) END,
            r.created_at, r.created_at + interval '90 seconds',
            CASE WHEN r.started THEN r.created_at + (g % 40) * interval '1 second' END,
            CASE WHEN r.state NOT IN ('QUEUED', 'INPROGRESS') THEN r.created_at + interval '90 seconds' END
     FROM generate_series(1, $3::int) AS g
     CROSS JOIN LATERAL (
       SELECT (ARRAY['SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED',
                     'SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED', 'FAILED', 'FAILED', 'FAILED',
                     'CANCELLED', 'CANCELLED', 'ERROR', 'QUEUED', 'INPROGRESS'])[1 + g % 20] AS rotated,
              now() - interval '7 days' + (g::float8 / $3) * interval '7 days' AS created_at
     ) AS r0
     CROSS JOIN LATERAL (
       -- Runs older than BENCH_OPEN_HOURS have ended: the queued ones cancelled, the running ones succeeded.
       SELECT CASE WHEN r0.rotated IN ('QUEUED', 'INPROGRESS') AND r0.created_at < now() - $4 * interval '1 hour'
                THEN CASE r0.rotated WHEN 'QUEUED' THEN 'CANCELLED' ELSE 'SUCCEEDED' END
                ELSE r0.rotated END AS state,
              g % 20 NOT IN (18, 15, 16) AS started,
              (ARRAY['claude-sonnet-4', 'gpt-5', 'gemini-2.5-pro'])[1 + g % 3] AS model,
              CASE WHEN g % 50 = 0 THEN 'sched-' || (g / 50 % 20) END AS schedule,
              r0.created_at
     ) AS r`,
    [teamUid, userUid, count, settings.openHours],
  );
}

async function timeRequests(what: string, count: number, once: () => Promise<void>) {
  const times = await timeSequentially(count, once);
  const row = { what, p50: percentile(times, 50), p95: percentile(times, 95) };
  console.log(`${what}: p50 ${row.p50.toFixed(1)} ms, p95 ${row.p95.toFixed(1)} ms (${count} requests)`);
  return row;
}

async function main(): Promise<void> {
  const scratch = await createScratchDatabase(settings.databaseUrl);
  cleanups.push(() => scratch.drop());
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-bench-overview-'));
  cleanups.push(async () => fs.rmSync(dataDir, { recursive: true, force: true }));
  const apiKey = `hgr_bench_${randomBytes(16).toString('hex')}`;
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    HANGAR_DATA_DIR: dataDir,
    HANGAR_BOOTSTRAP_API_KEY: apiKey,
    HANGAR_LOG_LEVEL: 'silent',
    DATABASE_URL: scratch.url,
  });
  const server = await startServer(config);
  cleanups.push(() => server.stop());
  const pool = new pg.Pool({ connectionString: scratch.url, max: 4 });
  cleanups.push(() => pool.end());
  const query = poolQuery(pool);
  const owner = await defaultOwner(server.database.db);

  console.log(`seeding ${settings.runs} runs over the last 7 days, and as many of another team…`);
  const seeding = performance.now();
  await query(`INSERT INTO teams (uid, name) VALUES ('benchotherteam00000001', 'other')`);
  await withRunIndexesRebuilt(query, async () => {
    await seed(query, owner.teamUid, owner.userUid, settings.runs);
    await seed(query, 'benchotherteam00000001', owner.userUid, settings.runs);
  });
  await query('VACUUM (ANALYZE) runs');
  await query('CHECKPOINT').catch(() => undefined);
  console.log(`seeded in ${((performance.now() - seeding) / 1000).toFixed(0)} s`);

  const base = `${server.url}/api/v1`;
  const get = async (url: string) => {
    const response = await fetch(`${base}${url}`, { headers: { authorization: `Bearer ${apiKey}` } });
    if (response.status !== 200) throw new Error(`GET ${url}: ${response.status} ${await response.text()}`);
    await response.arrayBuffer();
  };
  const since = (hours: number) => new Date(Math.floor(Date.now() / 3600_000) * 3600_000 - (hours - 1) * 3600_000);
  const count = (hours: number) => async () => {
    await query('SELECT count(*) FROM runs WHERE team_uid = $1 AND created_at >= $2', [owner.teamUid, since(hours)]);
  };

  const first = performance.now();
  await get('/overview?window=24h');
  const foldMs = performance.now() - first;
  console.log(`first GET /overview (folds the seeded runs' changes): ${foldMs.toFixed(0)} ms`);
  // What autovacuum does a minute later: the seed wrote and the fold deleted a million changes.
  await query('VACUUM (ANALYZE) run_overview_changes, run_overview_hours');
  const fromRuns = (hours: number) => async () => {
    await runOverview(
      server.database.db,
      owner.teamUid,
      { since: since(hours), until: new Date(), bucketSeconds: 3600 },
      {
        from: 'runs',
      },
    );
  };

  const rows = [
    await timeRequests('GET /agent/runs?limit=20 (baseline: an ordinary request)', settings.requests, () =>
      get('/agent/runs?limit=20'),
    ),
    await timeRequests('count(*) of the 24 h window (baseline: one bare scan)', settings.requests, count(24)),
    await timeRequests('GET /overview?window=24h', settings.requests, () => get('/overview?window=24h')),
    await timeRequests('the 24 h figures aggregated from the runs (baseline: before the rollup)', 5, fromRuns(24)),
    await timeRequests('count(*) of the 7 d window (baseline: one bare scan)', settings.requests, count(168)),
    await timeRequests('GET /overview?window=7d', settings.requests, () => get('/overview?window=7d')),
    await timeRequests('the 7 d figures aggregated from the runs (baseline: before the rollup)', 3, fromRuns(168)),
  ];

  console.log(
    `\n${settings.runs.toLocaleString('en')} runs of the team (and as many of another), PostgreSQL, one in ten still going in the last ${settings.openHours} h`,
  );
  console.log(
    `load average at the end: ${os
      .loadavg()
      .map((load) => load.toFixed(1))
      .join(' ')}\n`,
  );
  console.log(`first request, folding the seed's changes: ${foldMs.toFixed(0)} ms`);
  console.log('| request | p50 ms | p95 ms |\n|---|---|---|');
  for (const row of rows) console.log(`| ${row.what} | ${row.p50.toFixed(1)} | ${row.p95.toFixed(1)} |`);
}

main()
  .catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  })
  .finally(() => cleanUp());
