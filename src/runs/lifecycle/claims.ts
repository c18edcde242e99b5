import { sql, type Kysely } from 'kysely';
import type { DB } from '../../database.js';
import { tracingOn } from '../../platform/tracing.js';
import { checkMove } from './states.js';
import type { CapacityLimits, ClaimedRun } from './types.js';

/** How far into the queue a claim looks for runs of teams below their limit. */
const CLAIM_SCAN = 1000;

/**
 * Moves up to `batch` queued runs through PENDING to CLAIMED under this engine's lease, oldest first, without
 * passing the global or per-team limit of runs in PENDING, CLAIMED or INPROGRESS (`hangar_claim_runs`, in
 * functions.sql). QUEUED -> CLAIMED in the transition table.
 */
export async function claimRuns(
  db: Kysely<DB>,
  engineId: string,
  leaseSeconds: number,
  limits: CapacityLimits,
  batch: number,
): Promise<ClaimedRun[]> {
  checkMove('QUEUED', 'CLAIMED');
  const claimed = await sql<ClaimedRun>`
    SELECT * FROM hangar_claim_runs(${engineId}, ${leaseSeconds}::int, ${limits.perTeam}::int, ${limits.global}::int, ${batch}::int, ${CLAIM_SCAN}::int)`.execute(
    db,
  );
  if (tracingOn() && claimed.rows.length > 0) await addTraceParents(db, claimed.rows);
  return claimed.rows;
}

/**
 * The claim function's columns are fixed (changing them means replacing it while other replicas call it): with
 * tracing on, the runs' traceparents are read in one more statement per claim batch.
 */
async function addTraceParents(db: Kysely<DB>, runs: ClaimedRun[]): Promise<void> {
  const parents = await sql<{ id: string; trace_parent: string | null }>`
    SELECT id, trace_parent FROM runs WHERE id = ANY(${runs.map((run) => run.id)}::text[])`.execute(db);
  const byId = new Map(parents.rows.map((row) => [row.id, row.trace_parent]));
  for (const run of runs) run.trace_parent = byId.get(run.id) ?? null;
}

/** A self-hosted worker of a team, and the lease owner its runs are held by (any of its connections may act). */
export interface WorkerRef {
  teamUid: string;
  workerHost: string;
  owner: string;
}

/**
 * Moves up to `limit` of the worker's queued runs to PENDING under its lease, oldest first; never one run twice.
 * QUEUED -> PENDING in the transition table: the worker takes each run (PENDING -> CLAIMED) when it starts it.
 */
export async function claimWorkerRuns(
  db: Kysely<DB>,
  worker: WorkerRef,
  limit: number,
  leaseSeconds: number,
): Promise<ClaimedRun[]> {
  checkMove('QUEUED', 'PENDING');
  const { teamUid, workerHost, owner } = worker;
  const result = await sql<ClaimedRun & { created_at: Date }>`
    WITH claimed AS (
      UPDATE runs r SET state = 'PENDING', lease_owner = ${owner},
        lease_expires_at = clock_timestamp() + make_interval(secs => ${leaseSeconds}), updated_at = clock_timestamp()
      WHERE r.id IN (
        SELECT id FROM runs WHERE state = 'QUEUED' AND team_uid = ${teamUid} AND worker_host = ${workerHost}
        ORDER BY created_at, id LIMIT ${limit} FOR UPDATE SKIP LOCKED)
      RETURNING r.id, r.team_uid, r.execution_id, r.prompt, r.agent_config, r.environment_id, r.conversation_id, r.harness,
        r.attachment_count, r.state, r.created_at, r.trace_parent
    ), events AS (
      INSERT INTO run_events (event_uuid, run_id, execution_id, event_type, payload)
      SELECT gen_random_uuid()::text, c.id, c.execution_id::text, 'run_dispatched', jsonb_build_object('worker_host', ${workerHost}::text) FROM claimed c
    )
    SELECT * FROM claimed ORDER BY created_at, id`.execute(db);
  return result.rows;
}
