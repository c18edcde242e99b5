import { type Kysely, sql } from 'kysely';
import type { DB } from '../../database.js';
import { metricsServed } from '../../platform/metrics.js';
import { tracingOn } from '../../platform/tracing.js';
import { secondsBetween } from './metrics.js';
import { stateList } from './state-sql.js';
import { transition } from './states.js';
import type { CapacityLimits, ClaimedRun } from './types.js';

/** How far into the queue a claim looks for runs of teams below their limit. */
const CLAIM_SCAN = 1000;

/** How long a claimed run waited in the queue, in seconds (null when its row could not be read). */
export interface QueueWait {
  queued_seconds: number | null;
}

/** A claimed run's queue wait, from its row `r` (see claimRuns). */
const QUEUED_SECONDS = sql`${secondsBetween('r.created_at')} AS queued_seconds`;

/**
 * Moves up to `batch` queued runs through PENDING to CLAIMED under this engine's lease, oldest first, without
 * passing the global or per-team limit of runs in PENDING, CLAIMED or INPROGRESS (`hangar_claim_runs`, in
 * functions.sql): the move named `claim` (its events are written there).
 */
export async function claimRuns(
  db: Kysely<DB>,
  engineId: string,
  leaseSeconds: number,
  limits: CapacityLimits,
  batch: number,
): Promise<ClaimedRun[]> {
  transition('claim');
  const args = sql`${engineId}, ${leaseSeconds}::int, ${limits.perTeam}::int, ${limits.global}::int, ${batch}::int, ${CLAIM_SCAN}::int`;
  if (!tracingOn() && !metricsServed())
    return (await sql<ClaimedRun>`SELECT * FROM hangar_claim_runs(${args})`.execute(db)).rows;
  // The claim function's columns are fixed (changing them means replacing it while other replicas call it), so a
  // run's traceparent (its execution's spans join that trace) and queue wait are read beside it in the same
  // statement, from the row as it was when the statement began (neither column changes on a claim). OFFSET 0 keeps
  // the lookup per claimed run (an index scan), never a join over the whole table.
  const claimed = await sql<ClaimedRun & QueueWait>`
    SELECT c.id, c.team_uid, c.execution_id, c.prompt, c.agent_config, c.environment_id, c.conversation_id, c.harness,
      c.attachment_count, c.state, r.trace_parent, ${QUEUED_SECONDS}
    FROM hangar_claim_runs(${args}) WITH ORDINALITY AS c
    LEFT JOIN LATERAL (SELECT created_at, trace_parent FROM runs WHERE runs.id = c.id OFFSET 0) r ON true
    ORDER BY c.ordinality`.execute(db);
  // A run committed while the claim waited for its lock is claimed, but the statement's snapshot predates it: it
  // is read once more (rare: only while another replica claims).
  const unseen = claimed.rows.filter((run) => run.queued_seconds === null);
  if (unseen.length > 0) await addClaimColumns(db, unseen);
  return claimed.rows;
}

/** The traceparent and queue wait of claimed runs the claim's own statement could not see. */
async function addClaimColumns(db: Kysely<DB>, runs: Array<ClaimedRun & QueueWait>): Promise<void> {
  const rows = await sql<{ id: string; trace_parent: string | null } & QueueWait>`
    SELECT r.id, r.trace_parent, ${QUEUED_SECONDS} FROM runs r WHERE r.id = ANY(${runs.map((run) => run.id)}::text[])`.execute(
    db,
  );
  const byId = new Map(rows.rows.map((row) => [row.id, row]));
  for (const run of runs) {
    run.trace_parent = byId.get(run.id)?.trace_parent ?? null;
    run.queued_seconds = byId.get(run.id)?.queued_seconds ?? null;
  }
}

/** A self-hosted worker of a team, and the lease owner its runs are held by (any of its connections may act). */
export interface WorkerRef {
  teamUid: string;
  workerHost: string;
  owner: string;
}

/**
 * Moves up to `limit` of the worker's queued runs to PENDING under its lease, oldest first; never one run twice.
 * The move named `dispatch`: the worker takes each run (`take`) when it starts it.
 */
export async function claimWorkerRuns(
  db: Kysely<DB>,
  worker: WorkerRef,
  limit: number,
  leaseSeconds: number,
): Promise<ClaimedRun[]> {
  const dispatch = transition('dispatch');
  const { teamUid, workerHost, owner } = worker;
  const result = await sql<ClaimedRun & QueueWait>`
    WITH claimed AS (
      UPDATE runs r SET state = ${stateList([dispatch.to])}, lease_owner = ${owner},
        lease_expires_at = clock_timestamp() + make_interval(secs => ${leaseSeconds}), updated_at = clock_timestamp()
      WHERE r.id IN (
        SELECT id FROM runs WHERE state IN (${stateList(dispatch.from)}) AND team_uid = ${teamUid} AND worker_host = ${workerHost}
        ORDER BY created_at, id LIMIT ${limit} FOR UPDATE SKIP LOCKED)
      RETURNING r.id, r.team_uid, r.execution_id, r.prompt, r.agent_config, r.environment_id, r.conversation_id, r.harness,
        r.attachment_count, r.state, r.created_at, r.trace_parent
    ), events AS (
      INSERT INTO run_events (event_uuid, run_id, execution_id, event_type, payload)
      SELECT gen_random_uuid()::text, c.id, c.execution_id::text, ${sql.lit(dispatch.event)}, jsonb_build_object('worker_host', ${workerHost}::text) FROM claimed c
    )
    SELECT r.id, r.team_uid, r.execution_id, r.prompt, r.agent_config, r.environment_id, r.conversation_id, r.harness,
      r.attachment_count, r.state, r.trace_parent, ${QUEUED_SECONDS}
    FROM claimed r ORDER BY r.created_at, r.id`.execute(db);
  return result.rows;
}
