import { type Kysely, sql } from 'kysely';
import type { DB } from '../database.js';

/** Runs waiting or executing: how many per state, and per team and state. */
export interface QueueDepth {
  byState: Map<string, number>;
  /** `${team_uid}` -> state -> count, for every team with a waiting or executing run. */
  byTeam: Map<string, Map<string, number>>;
}

/**
 * Counts the runs in QUEUED, PENDING, CLAIMED and INPROGRESS, by state and team, in one statement. Each branch
 * matches a partial index's predicate (runs_dispatch, runs_worker_queue, runs_active), so the count reads the
 * waiting and executing runs only, never the ended ones that make up most of the table.
 */
export async function queueDepth(db: Kysely<DB>): Promise<QueueDepth> {
  const result = await sql<{ state: string; team_uid: string; runs: number }>`
    SELECT state, team_uid, count(*)::int AS runs FROM (
      SELECT state, team_uid FROM runs WHERE state = 'QUEUED' AND worker_host IS NULL
      UNION ALL SELECT state, team_uid FROM runs WHERE state = 'QUEUED' AND worker_host IS NOT NULL
      UNION ALL SELECT state, team_uid FROM runs WHERE state IN ('PENDING', 'CLAIMED', 'INPROGRESS')
    ) waiting GROUP BY state, team_uid`.execute(db);
  const byState = new Map<string, number>();
  const byTeam = new Map<string, Map<string, number>>();
  for (const row of result.rows) {
    byState.set(row.state, (byState.get(row.state) ?? 0) + row.runs);
    const team = byTeam.get(row.team_uid) ?? new Map<string, number>();
    team.set(row.state, row.runs);
    byTeam.set(row.team_uid, team);
  }
  return { byState, byTeam };
}
