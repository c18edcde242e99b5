// The overview's hourly rollup of ended runs (migration 0027). The triggers on runs append one signed row per change
// of an ended run to run_overview_changes; here a team's changes are folded into run_overview_hours, the totals per
// hour of creation in the groups the overview reads. Folding is the only update of those totals, one team at a time
// under an advisory lock, so the run ends themselves never wait on a shared total.
import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { DB } from '../../database.js';

/** The kinds of group, as the overview's GROUPING SETS name them. */
export type OverviewGroupKind = 'runs' | 'left' | 'schedule' | 'wait' | 'run';

/**
 * Percentiles come from a histogram of log-spaced bins (each 1/BINS_PER_E of a natural log wide, about 5%), so that
 * they are sums like the rest rather than a sort of every run in the window: a figure is exact to within half a bin.
 */
export const BINS_PER_E = 20;
export const binOf = (seconds: RawBuilder<unknown>) =>
  // No duration, no bin (NULL): greatest(NULL, 0) is 0, which put runs that never started in the lowest bin.
  sql`floor(ln(1 + CASE WHEN ${seconds} < 0 THEN 0 ELSE ${seconds} END) * ${sql.lit(BINS_PER_E)})::int`;

/**
 * A run's queue wait, in seconds: from its creation to its first claim (docs/lifecycle.md); NULL until claimed. Its
 * run time is agent_seconds, the agent time of its executions that ended (kept by hangar_run_times).
 */
export const queueWaitSeconds = sql`date_part('epoch', claimed_at - created_at)`;

/** Whole UTC hours, whatever the session's time zone. */
export const hourOf = (at: RawBuilder<unknown>) =>
  sql`date_bin('1 hour'::interval, ${at}, timestamptz '2000-01-01 00:00:00+00')`;

/** The run's columns the overview reads, as they are in both `runs` and `run_overview_changes`. */
const binned = (from: RawBuilder<unknown>) => sql`
  SELECT ${hourOf(sql`created_at`)} AS hour, ${hourOf(sql`coalesce(claimed_at, ended_at)`)} AS left_hour,
         state, model_id, error_code, schedule_id, inference_cost, sign,
         ${binOf(queueWaitSeconds)} AS wait_bin, ${binOf(sql`agent_seconds`)} AS run_bin
  FROM ${from} AS changes`;

/**
 * Signed changes summed by hour and group. GROUPING() has a bit per argument, first highest, set when the row's set
 * does not group by that column.
 */
export const changeGroups = (from: RawBuilder<unknown>) => sql`
  SELECT CASE GROUPING(left_hour, schedule_id, wait_bin, run_bin)
           WHEN 15 THEN 'runs' WHEN 7 THEN 'left' WHEN 11 THEN 'schedule' WHEN 13 THEN 'wait' ELSE 'run'
         END AS kind,
         hour, left_hour, state, model_id, error_code, schedule_id, coalesce(wait_bin, run_bin) AS bin,
         sum(sign)::int AS runs, sum(sign * inference_cost::numeric) AS cost
  FROM (${binned(from)}) AS binned
  GROUP BY GROUPING SETS ((hour, state, model_id, error_code), (hour, left_hour), (hour, schedule_id),
                          (hour, wait_bin), (hour, run_bin))`;

/** Advisory lock class of the fold (each team its own key): see hangar_lock_engine for the engines' class. */
const FOLD_LOCK_CLASS = 7240003;

/** Folds the team's pending changes into its hourly totals; returns how many changes it folded. */
export async function foldOverviewChanges(db: Kysely<DB>, teamUid: string): Promise<number> {
  return db.transaction().execute(async (trx) => {
    await sql`SELECT pg_advisory_xact_lock(${sql.lit(FOLD_LOCK_CLASS)}, hashtext(${teamUid}))`.execute(trx);
    const moved = await sql<{ changes: number }>`
      WITH moved AS (
        DELETE FROM run_overview_changes WHERE team_uid = ${teamUid}
        RETURNING created_at, claimed_at, ended_at, agent_seconds, state, model_id, error_code, schedule_id,
          inference_cost, sign
      ), added AS (
        INSERT INTO run_overview_hours AS totals
          (team_uid, hour, kind, left_hour, state, model_id, error_code, schedule_id, bin, runs, cost)
        SELECT ${teamUid}, hour, kind, left_hour, state, model_id, error_code, schedule_id, bin, runs, cost
        FROM (${changeGroups(sql`moved`)}) AS grouped
        ON CONFLICT (team_uid, hour, kind, left_hour, state, model_id, error_code, schedule_id, bin)
        DO UPDATE SET runs = totals.runs + excluded.runs,
                      cost = CASE WHEN totals.cost IS NULL AND excluded.cost IS NULL THEN NULL
                                  ELSE coalesce(totals.cost, 0) + coalesce(excluded.cost, 0) END
      )
      SELECT count(*)::int AS changes FROM moved`.execute(trx);
    return moved.rows[0]?.changes ?? 0;
  });
}

/**
 * Folds every team's pending changes, a team at a time. The overview folds its own team before reading; this pass
 * keeps the changes of teams that never open it from piling up (one row per run that ends), so that the first
 * overview after a long while does not pay for all of them.
 */
export async function foldAllOverviewChanges(db: Kysely<DB>): Promise<number> {
  const teams = await sql<{ team_uid: string }>`SELECT DISTINCT team_uid FROM run_overview_changes`.execute(db);
  let folded = 0;
  for (const { team_uid } of teams.rows) folded += await foldOverviewChanges(db, team_uid);
  return folded;
}
