// The run aggregates of the overview page: one team's runs created in a window, counted by hour and state, by
// error code, by day and model (spend), by schedule, plus the queue now and over time and the p50/p95 of queue
// wait and run time. Every query is bounded by the team and the window and reads the covering index
// runs_team_overview (migration 0021) only, so the cost grows with the runs in the window, never the table.
import { sql, type Kysely } from 'kysely';
import type { DB } from '../database.js';
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

interface GroupedRow {
  set: number;
  bucket: Date | null;
  state: string | null;
  day: Date | null;
  model_id: string | null;
  error_code: string | null;
  schedule_id: string | null;
  left_bucket: Date | null;
  runs: number;
  cost: number | null;
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

export async function runOverview(db: Kysely<DB>, teamUid: string, window: OverviewWindow): Promise<RunOverview> {
  const { since, until } = window;
  const interval = `${window.bucketSeconds} seconds`;
  const left = sql`coalesce(started_at, ended_at)`;
  // One scan of the window, several groupings: GROUPING() tells the sets apart (bit set = column not grouped).
  const grouped = sql<GroupedRow>`
    SELECT GROUPING(bucket, state, day, model_id, error_code, schedule_id, left_bucket)::int AS set,
           bucket, state, day, model_id, error_code, schedule_id, left_bucket,
           count(*)::int AS runs, sum(inference_cost)::float8 AS cost
    FROM (
      SELECT date_bin(${interval}::interval, created_at, ${since}) AS bucket, state,
             date_trunc('day', created_at, 'UTC') AS day, model_id, error_code, schedule_id, inference_cost,
             date_bin(${interval}::interval, ${left}, ${since}) AS left_bucket
      FROM runs
      WHERE team_uid = ${teamUid} AND created_at >= ${since} AND created_at < ${until}
    ) AS windowed
    GROUP BY GROUPING SETS ((bucket, state), (day, model_id), (state, error_code), (schedule_id), (left_bucket))`;
  const timings = sql<{
    wait: number[] | null;
    run: number[] | null;
    waited: number;
    ran: number;
  }>`
    SELECT percentile_cont(ARRAY[0.5, 0.95]) WITHIN GROUP (ORDER BY extract(epoch FROM started_at - created_at))
             FILTER (WHERE started_at IS NOT NULL) AS wait,
           percentile_cont(ARRAY[0.5, 0.95]) WITHIN GROUP (ORDER BY extract(epoch FROM ended_at - started_at))
             FILTER (WHERE started_at IS NOT NULL AND ended_at IS NOT NULL) AS run,
           count(*) FILTER (WHERE started_at IS NOT NULL)::int AS waited,
           count(*) FILTER (WHERE started_at IS NOT NULL AND ended_at IS NOT NULL)::int AS ran
    FROM runs
    WHERE team_uid = ${teamUid} AND created_at >= ${since} AND created_at < ${until}`;
  // Runs created before the window that were still waiting when it opened, by the bucket they stopped waiting in.
  const carried = sql<{ left_bucket: Date | null; runs: number }>`
    SELECT date_bin(${interval}::interval, ${left}, ${since}) AS left_bucket, count(*)::int AS runs
    FROM runs
    WHERE team_uid = ${teamUid} AND created_at >= ${new Date(since.getTime() - LOOKBACK_MS)} AND created_at < ${since}
      AND (${left} IS NULL OR ${left} >= ${since})
    GROUP BY 1`;
  const now = sql<{ state: string; runs: number }>`
    SELECT state, count(*)::int AS runs FROM runs
    WHERE team_uid = ${teamUid} AND state IN (${sql.join([...WAITING_STATES, ...ACTIVE_STATES])})
    GROUP BY state`;

  const [groupedRows, timingRows, carriedRows, nowRows] = await Promise.all([
    grouped.execute(db),
    timings.execute(db),
    carried.execute(db),
    now.execute(db),
  ]);
  const rows = groupedRows.rows;
  // GROUPING's bits, first argument highest: bucket 64, state 32, day 16, model_id 8, error_code 4, schedule 2,
  // left 1; a bit is set for each column the row's set does not group by. `of` takes the set's own columns.
  const of = (...columns: number[]) => {
    const grouping = 127 & ~columns.reduce((all, bit) => all | bit, 0);
    return rows.filter((row) => row.set === grouping);
  };

  const starts = bucketStarts(window);
  const byBucket = new Map(starts.map((at) => [at, {} as Record<string, number>]));
  for (const row of of(64, 32)) {
    const counts = byBucket.get(bucketKey(window, row.bucket!));
    if (counts) counts[row.state!] = (counts[row.state!] ?? 0) + row.runs;
  }
  const runsByBucket = [...byBucket].map(([at, counts]) => ({ at, counts }));

  // The queue at the end of each bucket: those waiting when the window opened, plus arrivals, less departures.
  const arrivals = new Map<string, number>();
  for (const { at, counts } of runsByBucket)
    arrivals.set(
      at,
      Object.values(counts).reduce((sum, count) => sum + count, 0),
    );
  const departures = new Map<string, number>();
  let waiting = 0;
  for (const row of [...of(1), ...carriedRows.rows]) {
    if (row.left_bucket === null) continue;
    const key = bucketKey(window, row.left_bucket);
    departures.set(key, (departures.get(key) ?? 0) + row.runs);
  }
  for (const row of carriedRows.rows) waiting += row.runs;
  const overTime = starts.map((at) => {
    waiting += (arrivals.get(at) ?? 0) - (departures.get(at) ?? 0);
    return { at, waiting: Math.max(0, waiting) };
  });

  const stateCount = (state: string) => nowRows.rows.find((row) => row.state === state)?.runs ?? 0;
  const failures = new Map<string | null, number>();
  for (const row of of(32, 4)) {
    if (!FAILURE_STATES.includes(row.state as (typeof FAILURE_STATES)[number])) continue;
    failures.set(row.error_code, (failures.get(row.error_code) ?? 0) + row.runs);
  }

  const scheduleCounts = of(2)
    .filter((row) => row.schedule_id !== null)
    .sort((a, b) => b.runs - a.runs || a.schedule_id!.localeCompare(b.schedule_id!))
    .slice(0, TOP);
  const names = await scheduleNames(
    db,
    teamUid,
    scheduleCounts.map((row) => row.schedule_id!),
  );

  const timing = timingRows.rows[0];
  const percentiles = (values: number[] | null | undefined, runs: number) => ({
    p50: values?.[0] ?? null,
    p95: values?.[1] ?? null,
    runs,
  });

  return {
    runsByBucket,
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
      queueWait: percentiles(timing?.wait, timing?.waited ?? 0),
      runTime: percentiles(timing?.run, timing?.ran ?? 0),
    },
    failures: [...failures]
      .map(([errorCode, runs]) => ({ errorCode, runs }))
      .sort((a, b) => b.runs - a.runs || String(a.errorCode).localeCompare(String(b.errorCode))),
    spendByDay: of(16, 8)
      .map((row) => ({
        day: row.day!.toISOString().slice(0, 10),
        modelId: row.model_id,
        costUsd: row.cost ?? 0,
        runs: row.runs,
      }))
      .sort((a, b) => a.day.localeCompare(b.day) || String(a.modelId).localeCompare(String(b.modelId))),
    busiestSchedules: scheduleCounts.map((row) => ({
      scheduleId: row.schedule_id!,
      name: names.get(row.schedule_id!) ?? row.schedule_id!,
      runs: row.runs,
    })),
  };
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
