// The run aggregates of the overview page: one team's runs created in a window, counted by hour and state, by
// error code, by day and model (spend), by schedule, plus the queue now and over time and the p50/p95 of queue
// wait and run time. Ended runs are read from the hourly rollup the lifecycle keeps (migration 0027,
// lifecycle/overview-rollup.ts): a window reads at most a few hundred rows per hour, however many runs it holds.
// The runs still going are aggregated from the runs themselves, through the partial index runs_team_overview_open,
// by hashing (no sort of the window's runs). Both parts are read in one snapshot, so a run that ends meanwhile is
// counted once. `from: 'runs'` aggregates every run from the rows (runs_team_overview, migration 0020): the
// reference the rollup is checked against (test/overview, bench/overview).
import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { DB } from '../database.js';
import { BINS_PER_E, binOf, changeGroups, foldOverviewChanges, queueWaitSeconds } from './lifecycle/overview-rollup.js';
import { ACTIVE_STATES, TERMINAL_STATES } from './lifecycle/states.js';

/** States a run waits in before its agent starts. */
const WAITING_STATES = ['QUEUED', 'PENDING'] as const;
/** States that count as failures, with the error code that says why. */
const FAILURE_STATES = TERMINAL_STATES.filter((state) => state !== 'SUCCEEDED' && state !== 'CANCELLED');
/**
 * How far before the window the queue's history looks for runs still waiting when the window opened. A run that
 * had waited longer is missing from the history's first hours (the `waiting_now` gauge, read by state, has it).
 */
const LOOKBACK_MS = 6 * 3600_000;
const TOP = 5;

export interface OverviewWindow {
  /** Start of the first bucket (inclusive): a bucket boundary. */
  since: Date;
  until: Date;
  bucketSeconds: number;
}

export interface RunOverview {
  runsByBucket: { at: string; counts: Record<string, number> }[];
  queue: {
    waitingNow: number;
    queuedNow: number;
    pendingNow: number;
    runningNow: number;
    overTime: { at: string; waiting: number }[];
  };
  timings: {
    queueWait: { p50: number | null; p95: number | null; runs: number };
    runTime: { p50: number | null; p95: number | null; runs: number };
  };
  failures: { errorCode: string | null; runs: number }[];
  spendByDay: { day: string; modelId: string | null; costUsd: number; runs: number }[];
  busiestSchedules: { scheduleId: string; name: string; runs: number }[];
}

/**
 * One group of the window's runs. The query groups by several sets at once; `set` says which: 'runs' (hour,
 * state, model, error code), 'left' (the hour runs stopped waiting), 'schedule', 'wait' and 'run' (time bins).
 */
interface GroupRow {
  set: 'runs' | 'left' | 'schedule' | 'wait' | 'run';
  bucket: Date | null;
  left_bucket: Date | null;
  state: string | null;
  model_id: string | null;
  error_code: string | null;
  schedule_id: string | null;
  bin: number | null;
  runs: number;
  cost: number | null;
}

/** The middle of a bin, in seconds (bins: lifecycle/overview-rollup.ts). */
const binMiddle = (bin: number) => Math.exp((bin + 0.5) / BINS_PER_E) - 1;

function percentiles(bins: { bin: number | null; runs: number }[]): {
  p50: number | null;
  p95: number | null;
  runs: number;
} {
  const sorted = bins.filter((bin): bin is { bin: number; runs: number } => bin.bin !== null);
  sorted.sort((a, b) => a.bin - b.bin);
  const runs = sorted.reduce((sum, bin) => sum + bin.runs, 0);
  const at = (fraction: number) => {
    if (runs === 0) return null;
    let seen = 0;
    for (const bin of sorted) {
      seen += bin.runs;
      if (seen >= fraction * runs) return binMiddle(bin.bin);
    }
    return binMiddle(sorted.at(-1)!.bin);
  };
  return { p50: at(0.5), p95: at(0.95), runs };
}

/** Buckets start at `since` and are `bucketSeconds` long; a time maps to the start of its bucket. */
function bucketKey(window: OverviewWindow, at: Date): string {
  const size = window.bucketSeconds * 1000;
  const index = Math.floor((at.getTime() - window.since.getTime()) / size);
  return new Date(window.since.getTime() + index * size).toISOString();
}

function bucketStarts(window: OverviewWindow): string[] {
  const starts: string[] = [];
  for (let at = window.since.getTime(); at < window.until.getTime(); at += window.bucketSeconds * 1000)
    starts.push(new Date(at).toISOString());
  return starts;
}

const add = <Key>(map: Map<Key, number>, key: Key, count: number) => map.set(key, (map.get(key) ?? 0) + count);

const OPEN_STATES = ['QUEUED', ...ACTIVE_STATES] as const;
const HOUR_SECONDS = 3600;

interface Sources {
  /** Read ended runs from the rollup ('rollup', the default, for hourly buckets) or every run from the rows. */
  from?: 'rollup' | 'runs';
}

export async function runOverview(
  db: Kysely<DB>,
  teamUid: string,
  window: OverviewWindow,
  sources: Sources = {},
): Promise<RunOverview> {
  const { since, until } = window;
  const lookback = new Date(since.getTime() - LOOKBACK_MS);
  const fromRollup =
    (sources.from ?? 'rollup') === 'rollup' &&
    window.bucketSeconds === HOUR_SECONDS &&
    since.getTime() % (HOUR_SECONDS * 1000) === 0;
  const interval = `${window.bucketSeconds} seconds`;
  // A run stops waiting when it is first claimed (or ends unclaimed): the queue wait's own end.
  const left = sql`coalesce(claimed_at, ended_at)`;
  const openOnly = fromRollup ? sql`AND state IN (${sql.join([...OPEN_STATES])})` : sql``;
  const inWindow = sql`team_uid = ${teamUid} AND created_at >= ${since} AND created_at < ${until} ${openOnly}`;
  // One scan of the window and one hash table per grouping set: every figure is rolled up from these groups.
  // GROUPING() has a bit per argument, first highest, set when the row's set does not group by that column.
  const groups = sql<GroupRow>`
    SELECT CASE GROUPING(bucket, left_bucket, schedule_id, wait_bin, run_bin)
             WHEN 15 THEN 'runs' WHEN 23 THEN 'left' WHEN 27 THEN 'schedule' WHEN 29 THEN 'wait' ELSE 'run'
           END AS set,
           bucket, left_bucket, state, model_id, error_code, schedule_id, coalesce(wait_bin, run_bin) AS bin,
           count(*)::int AS runs, sum(inference_cost)::float8 AS cost
    FROM (
      SELECT date_bin(${interval}::interval, created_at, ${since}) AS bucket,
             date_bin(${interval}::interval, ${left}, ${since}) AS left_bucket,
             state, model_id, error_code, schedule_id, inference_cost,
             ${binOf(queueWaitSeconds)} AS wait_bin, ${binOf(sql`agent_seconds`)} AS run_bin
      FROM runs WHERE ${inWindow}
    ) AS windowed
    GROUP BY GROUPING SETS ((bucket, state, model_id, error_code), (left_bucket), (schedule_id), (wait_bin), (run_bin))`;
  // Runs created before the window that were still waiting when it opened, by the bucket they stopped waiting in.
  const carried = sql<{ left_bucket: Date | null; runs: number }>`
    SELECT date_bin(${interval}::interval, ${left}, ${since}) AS left_bucket, count(*)::int AS runs
    FROM runs
    WHERE team_uid = ${teamUid} AND created_at >= ${lookback} AND created_at < ${since} ${openOnly}
      AND (${left} IS NULL OR ${left} >= ${since})
    GROUP BY 1`;
  const now = sql<{ state: string; runs: number }>`
    SELECT state, count(*)::int AS runs FROM runs
    WHERE team_uid = ${teamUid} AND state IN (${sql.join([...WAITING_STATES, ...ACTIVE_STATES])})
    GROUP BY state`;

  if (fromRollup) await foldOverviewChanges(db, teamUid);
  // One snapshot for every part: a run that ends meanwhile is either still going or in the rollup, never both.
  const [groupRows, carriedRows, nowRows, endedRows] = await db
    .transaction()
    .setIsolationLevel('repeatable read')
    .execute(async (trx) => {
      // The planner cannot know how few groups the hours and states make (it guesses one per run), so it would
      // sort the whole window for some sets instead of hashing them all in one pass, and the sort's cost would
      // turn JIT compilation on: together twice as slow at 200k runs (bench/overview). The hash tables stay small
      // (a few thousand groups); work_mem only lets the planner expect so.
      await sql`SET LOCAL enable_sort = off`.execute(trx);
      await sql`SET LOCAL work_mem = '64MB'`.execute(trx);
      await sql`SET LOCAL jit = off`.execute(trx);
      return [
        await groups.execute(trx),
        await carried.execute(trx),
        await now.execute(trx),
        fromRollup ? (await endedGroups(teamUid, lookback, until).execute(trx)).rows : [],
      ] as const;
    });
  // Ended runs from the rollup: those of the window are groups like the rest; those created in the lookback whose
  // wait ended in the window were still waiting when it opened.
  for (const row of endedRows) {
    if (row.bucket! >= since) groupRows.rows.push(row);
    else if (row.set === 'left' && (row.left_bucket === null || row.left_bucket >= since))
      carriedRows.rows.push({ left_bucket: row.left_bucket, runs: row.runs });
  }
  const rows = groupRows.rows;
  const timingRows = rows.filter((row) => row.set === 'wait' || row.set === 'run');

  const starts = bucketStarts(window);
  const byBucket = new Map(starts.map((at) => [at, {} as Record<string, number>]));
  const arrivals = new Map<string, number>();
  const departures = new Map<string, number>();
  const failures = new Map<string | null, number>();
  const spend = new Map<string, { day: string; modelId: string | null; costUsd: number; runs: number }>();
  const schedules = new Map<string, number>();
  for (const row of rows) {
    if (row.set === 'left' && row.left_bucket) add(departures, bucketKey(window, row.left_bucket), row.runs);
    if (row.set === 'schedule' && row.schedule_id !== null) add(schedules, row.schedule_id, row.runs);
    if (row.set !== 'runs') continue;
    const bucket = row.bucket!;
    const state = row.state!;
    const key = bucketKey(window, bucket);
    const counts = byBucket.get(key);
    if (counts) counts[state] = (counts[state] ?? 0) + row.runs;
    add(arrivals, key, row.runs);
    if (FAILURE_STATES.includes(state as (typeof FAILURE_STATES)[number])) add(failures, row.error_code, row.runs);
    // Buckets are whole hours (UTC), so each lies in one UTC day.
    const day = bucket.toISOString().slice(0, 10);
    const spent = spend.get(`${day} ${row.model_id}`) ?? { day, modelId: row.model_id, costUsd: 0, runs: 0 };
    spent.costUsd += row.cost ?? 0;
    spent.runs += row.runs;
    spend.set(`${day} ${row.model_id}`, spent);
  }

  // The queue at the end of each bucket: those waiting when the window opened, plus arrivals, less departures.
  let waiting = 0;
  for (const row of carriedRows.rows) {
    waiting += row.runs;
    if (row.left_bucket) add(departures, bucketKey(window, row.left_bucket), row.runs);
  }
  const overTime = starts.map((at) => {
    waiting += (arrivals.get(at) ?? 0) - (departures.get(at) ?? 0);
    return { at, waiting: Math.max(0, waiting) };
  });

  const stateCount = (state: string) => nowRows.rows.find((row) => row.state === state)?.runs ?? 0;
  const busiest = [...schedules].sort(([a, aRuns], [b, bRuns]) => bRuns - aRuns || a.localeCompare(b)).slice(0, TOP);
  const names = await scheduleNames(
    db,
    teamUid,
    busiest.map(([scheduleId]) => scheduleId),
  );

  return {
    runsByBucket: [...byBucket].map(([at, counts]) => ({ at, counts })),
    queue: {
      waitingNow: WAITING_STATES.reduce((sum, state) => sum + stateCount(state), 0),
      queuedNow: stateCount('QUEUED'),
      pendingNow: stateCount('PENDING'),
      runningNow: ACTIVE_STATES.filter((state) => state !== 'PENDING').reduce(
        (sum, state) => sum + stateCount(state),
        0,
      ),
      overTime,
    },
    timings: {
      queueWait: percentiles(timingRows.filter((row) => row.set === 'wait')),
      runTime: percentiles(timingRows.filter((row) => row.set === 'run')),
    },
    failures: [...failures]
      .map(([errorCode, runs]) => ({ errorCode, runs }))
      .sort((a, b) => b.runs - a.runs || String(a.errorCode).localeCompare(String(b.errorCode))),
    spendByDay: [...spend.values()].sort(
      (a, b) => a.day.localeCompare(b.day) || String(a.modelId).localeCompare(String(b.modelId)),
    ),
    busiestSchedules: busiest.map(([scheduleId, runs]) => ({
      scheduleId,
      name: names.get(scheduleId) ?? scheduleId,
      runs,
    })),
  };
}

/**
 * The ended runs' groups of the hours from `since` up to `until`: the rollup's totals plus the changes not folded
 * into them yet (a run that ended since the fold), summed per group; groups whose runs cancel out are left out.
 */
function endedGroups(teamUid: string, since: Date, until: Date): RawBuilder<GroupRow> {
  const pending = sql`(SELECT * FROM run_overview_changes WHERE team_uid = ${teamUid})`;
  return sql<GroupRow>`
    SELECT kind AS set, hour AS bucket, left_hour AS left_bucket, state, model_id, error_code, schedule_id, bin,
           sum(runs)::int AS runs, sum(cost)::float8 AS cost
    FROM (
      SELECT kind, hour, left_hour, state, model_id, error_code, schedule_id, bin, runs, cost
      FROM run_overview_hours WHERE team_uid = ${teamUid} AND hour >= ${since} AND hour < ${until}
      UNION ALL
      SELECT kind, hour, left_hour, state, model_id, error_code, schedule_id, bin, runs, cost
      FROM (${changeGroups(pending)}) AS changes WHERE hour >= ${since} AND hour < ${until}
    ) AS ended
    GROUP BY kind, hour, left_hour, state, model_id, error_code, schedule_id, bin
    HAVING sum(runs) <> 0`;
}

/** The name each schedule had on its latest run (a run keeps its schedule's name as of its start). */
async function scheduleNames(db: Kysely<DB>, teamUid: string, scheduleIds: string[]): Promise<Map<string, string>> {
  if (scheduleIds.length === 0) return new Map();
  // One index probe per schedule (runs_schedule_tick, newest tick first), however many runs it has had.
  const rows = await sql<{ schedule_id: string; name: string | null }>`
    SELECT ids.id AS schedule_id,
           (SELECT schedule ->> 'schedule_name' FROM runs
            WHERE schedule_id = ids.id AND team_uid = ${teamUid}
            ORDER BY schedule_tick DESC LIMIT 1) AS name
    FROM unnest(${scheduleIds}::text[]) AS ids (id)`.execute(db);
  return new Map(rows.rows.filter((row) => row.name !== null).map((row) => [row.schedule_id, row.name!]));
}
