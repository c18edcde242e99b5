import type { Kysely } from 'kysely';
import type { DB } from '../database.js';

/**
 * What the messages slice needs of runs: where a run sits (its team, scope, and the root of its tree of parent
 * runs, so that runs of one tree may talk and no other), and the cursor over their timeline events.
 */
export interface RunPlace {
  id: string;
  teamUid: string;
  /** The top of its tree: itself for a run without a parent. */
  rootRunId: string;
  scopeType: 'User' | 'Team';
  creatorUid: string;
  state: string;
  executionId: number;
}

export async function runPlaces(db: Kysely<DB>, ids: readonly string[]): Promise<Map<string, RunPlace>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom('runs')
    .select(['id', 'team_uid', 'root_run_id', 'parent_run_id', 'scope_type', 'creator_uid', 'state', 'execution_id'])
    .where('id', 'in', [...new Set(ids)])
    .execute();
  return new Map(
    rows.map((row) => [
      row.id,
      {
        id: row.id,
        teamUid: row.team_uid,
        // Runs made before migration 0048 may lack it: the parent is the nearest tree a run is known to be in.
        rootRunId: row.root_run_id ?? row.parent_run_id ?? row.id,
        scopeType: row.scope_type,
        creatorUid: row.creator_uid,
        state: row.state,
        executionId: row.execution_id,
      },
    ]),
  );
}

export interface RunEventItem {
  event_type: string;
  run_id: string;
  ref_id?: string;
  execution_id?: string;
  occurred_at: string;
  sequence: number;
}

/** The timeline events of `runIds` after sequence `since`, oldest first. */
export async function runEventsSince(
  db: Kysely<DB>,
  runIds: readonly string[],
  since: number,
  limit: number,
): Promise<RunEventItem[]> {
  const rows = await db
    .selectFrom('run_events')
    .select(['seq', 'run_id', 'execution_id', 'event_type', 'occurred_at', 'payload'])
    .where('run_id', 'in', [...runIds])
    .where('seq', '>', String(since))
    .orderBy('seq')
    .limit(limit)
    .execute();
  return rows.map((row) => {
    const refId = row.payload && typeof row.payload.ref_id === 'string' ? row.payload.ref_id : undefined;
    return {
      event_type: row.event_type,
      run_id: row.run_id,
      ...(refId ? { ref_id: refId } : {}),
      ...(row.execution_id ? { execution_id: row.execution_id } : {}),
      occurred_at: new Date(row.occurred_at).toISOString(),
      sequence: Number(row.seq),
    };
  });
}
