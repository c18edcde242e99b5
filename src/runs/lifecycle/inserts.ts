import { type Kysely, sql } from 'kysely';
import type { DB } from '../../database.js';
import { activeTraceparent } from '../../platform/tracing.js';
import { type CapacityLimits, NEW_RUN_COLUMNS, type NewAttachment, type NewRun } from './types.js';

/**
 * Inserts runs and their `oz_run_created` events in one statement: one round trip, committed together. With
 * `limits`, also tells whether the executing runs have reached them (the new runs will wait in QUEUED).
 */
export async function insertRuns(
  db: Kysely<DB>,
  runs: NewRun[],
  limits?: CapacityLimits,
): Promise<{ atCapacity: boolean }> {
  if (runs.length === 0) return { atCapacity: false };
  const teamUid = runs[0]!.team_uid;
  // Each count stops at its limit: whether the limit is reached is all a create needs, and counting every
  // executing run made a create cost O(executing runs) (19 ms of PostgreSQL time with 50k of them). The function
  // (functions.sql) counts with plain index scans, which skip the dead entries every finished run leaves.
  const atCapacity = limits
    ? sql<boolean>`(SELECT hangar_at_capacity(${teamUid}, ${limits.global}::int, ${limits.perTeam}::int))`
    : sql<boolean>`false`;
  // The rows travel as one JSON parameter: one statement text for any number of runs (prepared once per
  // connection), and no per-value parameters to build and bind (a scheduler batch is 500 runs of 29 columns).
  // With tracing on, the run's execution joins the trace of what created it (a request, a scheduler pass).
  const traceParent = activeTraceparent() ?? null;
  const rows = runs.map((run) => ({
    ...run,
    schedule_id: run.schedule?.schedule_id ?? null,
    trace_parent: traceParent,
  }));
  const columns = sql.raw([...NEW_RUN_COLUMNS, 'trace_parent'].join(', '));
  const result = await sql<{ at_capacity: boolean }>`
    WITH inserted AS (
      INSERT INTO runs (${columns})
      SELECT ${columns} FROM jsonb_populate_recordset(NULL::runs, ${JSON.stringify(rows)}::jsonb)
      RETURNING id
    )
    INSERT INTO run_events (event_uuid, run_id, event_type)
    SELECT gen_random_uuid()::text, id, 'oz_run_created' FROM inserted
    RETURNING ${atCapacity} AS at_capacity`.execute(db);
  return { atCapacity: result.rows.some((row) => row.at_capacity) };
}

/** A run with its files, committed together. */
export async function insertRun(
  db: Kysely<DB>,
  run: NewRun,
  attachments: NewAttachment[],
  limits?: CapacityLimits,
): Promise<{ atCapacity: boolean }> {
  if (attachments.length === 0) return insertRuns(db, [run], limits);
  return db.transaction().execute(async (trx) => {
    const result = await insertRuns(trx, [run], limits);
    await insertAttachments(trx, run.id, attachments);
    return result;
  });
}

export async function insertAttachments(db: Kysely<DB>, runId: string, attachments: NewAttachment[]): Promise<void> {
  if (attachments.length === 0) return;
  await db
    .insertInto('run_attachments')
    .values(attachments.map((attachment, position) => ({ run_id: runId, position, ...attachment })))
    .execute();
}
