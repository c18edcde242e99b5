import { sql, type Kysely } from 'kysely';
import type { DB } from '../platform/db/schema.js';

/** Queries of the execution engine: claims, leases, transitions, follow-up inputs and the transcript. */

export const ACTIVE_STATES = ['PENDING', 'CLAIMED', 'INPROGRESS'] as const;
/** Serializes claimers across replicas so the concurrency limits hold exactly (claims take about a millisecond). */
const CLAIM_LOCK = 7_240_001;
/** How far into the queue a claim looks for runs of teams below their limit. */
const CLAIM_SCAN = 1000;

export interface ClaimedRun {
  id: string;
  team_uid: string;
  execution_id: number;
  prompt: string;
  agent_config: Record<string, unknown>;
  environment_id: string | null;
  conversation_id: string | null;
  harness: string | null;
}

export interface Limits {
  global: number;
  perTeam: number;
}

const json = (value: unknown) => sql`${JSON.stringify(value)}::jsonb`;

/**
 * Moves up to `batch` queued runs to PENDING under this engine's lease, oldest first, without passing the global
 * or per-team limit of runs in PENDING, CLAIMED or INPROGRESS.
 */
export async function claimRuns(db: Kysely<DB>, engineId: string, leaseSeconds: number, limits: Limits, batch: number): Promise<ClaimedRun[]> {
  return db.transaction().execute(async (trx) => {
    await sql`SELECT pg_advisory_xact_lock(${CLAIM_LOCK})`.execute(trx);
    const candidates = await sql<{ id: string }>`
      WITH active AS (
        SELECT team_uid, count(*)::int AS n FROM runs WHERE state IN ('PENDING', 'CLAIMED', 'INPROGRESS') GROUP BY team_uid
      ), head AS (
        SELECT id, team_uid, created_at FROM runs
        WHERE state = 'QUEUED' AND worker_host IS NULL ORDER BY created_at, id LIMIT ${CLAIM_SCAN}
      ), queued AS (
        SELECT id, team_uid, created_at, row_number() OVER (PARTITION BY team_uid ORDER BY created_at, id) AS position FROM head
      )
      SELECT q.id FROM queued q LEFT JOIN active a ON a.team_uid = q.team_uid
      WHERE coalesce(a.n, 0) + q.position <= ${limits.perTeam}
      ORDER BY q.created_at, q.id
      LIMIT greatest(0, least(${batch}::int, ${limits.global}::int - (SELECT coalesce(sum(n), 0)::int FROM active)))`.execute(trx);
    if (candidates.rows.length === 0) return [];
    const ids = candidates.rows.map((row) => row.id);
    const claimed = await sql<ClaimedRun>`
      WITH claimed AS (
        UPDATE runs SET state = 'PENDING', lease_owner = ${engineId},
          lease_expires_at = clock_timestamp() + make_interval(secs => ${leaseSeconds}), updated_at = clock_timestamp()
        WHERE id IN (SELECT id FROM runs WHERE id = ANY(${ids}::text[]) AND state = 'QUEUED' FOR UPDATE SKIP LOCKED)
        RETURNING id, team_uid, execution_id, prompt, agent_config, environment_id, conversation_id, harness, created_at
      ), events AS (
        INSERT INTO run_events (event_uuid, run_id, execution_id, event_type, payload)
        SELECT gen_random_uuid()::text, id, execution_id::text, 'run_dispatched', ${json({ engine: engineId })} FROM claimed
      )
      SELECT id, team_uid, execution_id, prompt, agent_config, environment_id, conversation_id, harness FROM claimed
      ORDER BY created_at, id`.execute(trx);
    return claimed.rows;
  });
}

/** Active runs a caller's new run would wait behind: whether the limits are reached right now. */
export async function atCapacity(db: Kysely<DB>, teamUid: string, limits: Limits): Promise<boolean> {
  const row = await sql<{ total: number; team: number }>`
    SELECT count(*)::int AS total, count(*) FILTER (WHERE team_uid = ${teamUid})::int AS team
    FROM runs WHERE state IN ('PENDING', 'CLAIMED', 'INPROGRESS')`.execute(db);
  const counts = row.rows[0]!;
  return counts.total >= limits.global || counts.team >= limits.perTeam;
}

/**
 * Moves an owned run from one active state to the next with its timeline event. False when the run is no longer
 * this engine's in that state (cancelled, or its lease was taken back).
 */
export async function advance(
  db: Kysely<DB>,
  run: { id: string; engineId: string; executionId: number },
  from: string,
  to: string,
  event: { type: string; payload?: Record<string, unknown> },
  extra: { started?: boolean; conversationId?: string; harness?: string } = {},
): Promise<boolean> {
  const result = await sql<{ id: string }>`
    WITH moved AS (
      UPDATE runs SET state = ${to}, updated_at = clock_timestamp(),
        started_at = CASE WHEN ${extra.started ?? false} THEN coalesce(started_at, clock_timestamp()) ELSE started_at END,
        sandbox_running = sandbox_running OR ${extra.started ?? false},
        conversation_id = coalesce(conversation_id, ${extra.conversationId ?? null}),
        harness = coalesce(${extra.harness ?? null}, harness)
      WHERE id = ${run.id} AND state = ${from} AND lease_owner = ${run.engineId}
      RETURNING id
    ), events AS (
      INSERT INTO run_events (event_uuid, run_id, execution_id, event_type, payload)
      SELECT gen_random_uuid()::text, id, ${String(run.executionId)}, ${event.type}, ${event.payload ? json(event.payload) : null} FROM moved
    )
    SELECT id FROM moved`.execute(db);
  return result.rows.length > 0;
}

export async function recordEvent(db: Kysely<DB>, runId: string, executionId: number, type: string, payload?: Record<string, unknown>): Promise<void> {
  await db
    .insertInto('run_events')
    .values({ event_uuid: crypto.randomUUID(), run_id: runId, execution_id: String(executionId), event_type: type, payload: payload ? JSON.stringify(payload) : null })
    .execute();
}

/** Follow-ups not yet given to a harness, oldest first; marks them delivered. */
export async function takeInputs(db: Kysely<DB>, runId: string, purpose: 'agent' | 'debug'): Promise<string[]> {
  return (await takeInputRows(db, runId, purpose)).map((row) => row.message);
}

export async function takeInputRows(db: Kysely<DB>, runId: string, purpose: 'agent' | 'debug'): Promise<Array<{ seq: string; message: string }>> {
  const rows = await sql<{ message: string; seq: string }>`
    UPDATE run_inputs SET delivered_at = clock_timestamp()
    WHERE run_id = ${runId} AND purpose = ${purpose} AND delivered_at IS NULL
    RETURNING message, seq`.execute(db);
  return rows.rows.sort((a, b) => Number(a.seq) - Number(b.seq));
}

/** Follow-ups that could not be written to the harness after all: the next execution takes them. */
export async function returnInputs(db: Kysely<DB>, seqs: string[]): Promise<void> {
  if (seqs.length === 0) return;
  await db.updateTable('run_inputs').set({ delivered_at: null }).where('seq', 'in', seqs as never[]).execute();
}

export interface Outcome {
  state: 'SUCCEEDED' | 'FAILED' | 'ERROR' | 'BLOCKED';
  eventType: string;
  statusMessage: Record<string, unknown> | null;
  usage: Record<string, number> | null;
  eventPayload?: Record<string, unknown>;
  /** Keep the workspace for debugging: `{owner, workspace, until}`. */
  debugSession?: { owner: string; workspace: string; until: string };
}

/**
 * Ends this engine's execution of a run. Follow-ups that arrived while it ran and were not delivered start the
 * next execution instead of ending the run (unless it failed). The row lock orders this against a follow-up
 * being added, so none is lost. Returns what happened: `ended`, `continued`, or `lost` (no longer ours).
 */
export async function finishExecution(db: Kysely<DB>, run: { id: string; engineId: string; executionId: number }, outcome: Outcome): Promise<'ended' | 'continued' | 'lost'> {
  return db.transaction().execute(async (trx) => {
    const current = await sql<{ state: string; lease_owner: string | null; execution_id: number }>`
      SELECT state, lease_owner, execution_id FROM runs WHERE id = ${run.id} FOR UPDATE`.execute(trx);
    const row = current.rows[0];
    if (!row || row.lease_owner !== run.engineId || !(ACTIVE_STATES as readonly string[]).includes(row.state) || row.execution_id !== run.executionId) {
      return 'lost';
    }
    await recordEvent(trx, run.id, run.executionId, outcome.eventType, outcome.eventPayload);
    const waiting = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM run_inputs WHERE run_id = ${run.id} AND purpose = 'agent' AND delivered_at IS NULL`.execute(trx);
    const usage = outcome.usage ? json(outcome.usage) : null;
    if (waiting.rows[0]!.n > 0 && (outcome.state === 'SUCCEEDED' || outcome.state === 'BLOCKED')) {
      const next = run.executionId + 1;
      await sql`UPDATE run_inputs SET execution_id = ${next} WHERE run_id = ${run.id} AND delivered_at IS NULL AND purpose = 'agent'`.execute(trx);
      await sql`
        UPDATE runs SET state = 'QUEUED', execution_id = ${next}, lease_owner = NULL, lease_expires_at = NULL,
          sandbox_running = false, status_message = NULL, updated_at = clock_timestamp(),
          request_usage = coalesce(${usage}, request_usage)
        WHERE id = ${run.id}`.execute(trx);
      await recordEvent(trx, run.id, next, 'run_continued', { reason: 'follow-ups arrived while the previous execution ran' });
      return 'continued';
    }
    await sql`
      UPDATE runs SET state = ${outcome.state}, status_message = ${outcome.statusMessage ? json(outcome.statusMessage) : null},
        ended_at = clock_timestamp(), updated_at = clock_timestamp(), lease_owner = NULL, lease_expires_at = NULL,
        sandbox_running = false, request_usage = coalesce(${usage}, request_usage),
        debug_session = ${outcome.debugSession ? json(outcome.debugSession) : null}
      WHERE id = ${run.id}`.execute(trx);
    return 'ended';
  });
}

/** Puts an owned run that never reached its agent back in the queue (the engine is shutting down). */
export async function requeue(db: Kysely<DB>, run: { id: string; engineId: string; executionId: number }, reason: string): Promise<void> {
  await sql`
    WITH moved AS (
      UPDATE runs SET state = 'QUEUED', lease_owner = NULL, lease_expires_at = NULL, sandbox_running = false, updated_at = clock_timestamp()
      WHERE id = ${run.id} AND lease_owner = ${run.engineId} AND state IN ('PENDING', 'CLAIMED') RETURNING id
    )
    INSERT INTO run_events (event_uuid, run_id, execution_id, event_type, payload)
    SELECT gen_random_uuid()::text, id, ${String(run.executionId)}, 'run_requeued', ${json({ reason })} FROM moved`.execute(db);
}

/** Extends this engine's leases; returns the runs it still holds (the others were cancelled or taken back). */
export async function renewLeases(db: Kysely<DB>, engineId: string, runIds: string[], leaseSeconds: number): Promise<Set<string>> {
  if (runIds.length === 0) return new Set();
  const rows = await sql<{ id: string }>`
    UPDATE runs SET lease_expires_at = clock_timestamp() + make_interval(secs => ${leaseSeconds})
    WHERE id = ANY(${runIds}::text[]) AND lease_owner = ${engineId} AND state IN ('PENDING', 'CLAIMED', 'INPROGRESS')
    RETURNING id`.execute(db);
  return new Set(rows.rows.map((row) => row.id));
}

const ENGINE_LOST = {
  message: 'The engine executing this run stopped responding; the run may be retried',
  error_code: 'resource_unavailable',
  retryable: true,
};

/**
 * Takes back runs whose engine stopped renewing its lease: a run whose agent had not started goes back to the
 * queue, one whose agent was running ends ERROR (retryable). Safe with every replica doing it at once.
 */
export async function reapExpiredLeases(db: Kysely<DB>): Promise<number> {
  const result = await sql<{ id: string }>`
    WITH expired AS (
      SELECT id FROM runs
      WHERE state IN ('PENDING', 'CLAIMED', 'INPROGRESS') AND lease_expires_at < clock_timestamp()
      FOR UPDATE SKIP LOCKED
    ), reaped AS (
      UPDATE runs r SET
        state = CASE WHEN r.state = 'INPROGRESS' THEN 'ERROR' ELSE 'QUEUED' END,
        status_message = CASE WHEN r.state = 'INPROGRESS' THEN ${json(ENGINE_LOST)} ELSE r.status_message END,
        ended_at = CASE WHEN r.state = 'INPROGRESS' THEN clock_timestamp() ELSE r.ended_at END,
        lease_owner = NULL, lease_expires_at = NULL, sandbox_running = false, updated_at = clock_timestamp()
      FROM expired WHERE r.id = expired.id
      RETURNING r.id, r.state, r.execution_id
    ), events AS (
      INSERT INTO run_events (event_uuid, run_id, execution_id, event_type, payload)
      SELECT gen_random_uuid()::text, id, execution_id::text,
        CASE WHEN state = 'ERROR' THEN 'oz_run_errored' ELSE 'run_requeued' END,
        ${json({ reason: 'lease expired: the engine executing the run stopped responding' })}
      FROM reaped
    )
    SELECT id FROM reaped`.execute(db);
  return result.rows.length;
}

export interface TranscriptRow {
  run_id: string;
  execution_id: number;
  stream: 'input' | 'output';
  line: string;
}

export async function appendTranscript(db: Kysely<DB>, rows: TranscriptRow[]): Promise<void> {
  if (rows.length === 0) return;
  await db.insertInto('run_transcript').values(rows).execute();
}

/** After a cancel has stopped the harness: the run no longer has a sandbox. */
export async function clearSandboxIfCancelled(db: Kysely<DB>, runId: string): Promise<void> {
  await db.updateTable('runs').set({ sandbox_running: false }).where('id', '=', runId).where('state', '=', 'CANCELLED').execute();
}

export async function insertArtifact(db: Kysely<DB>, artifact: { uid: string; run_id: string; team_uid: string; artifact_type: string; data: Record<string, unknown> }): Promise<void> {
  await db.insertInto('artifacts').values({ ...artifact, data: JSON.stringify(artifact.data) }).execute();
}

/** The transcript of every execution of the runs in `conversationId` before (runId, executionId), in order. */
export async function conversationHistory(db: Kysely<DB>, conversationId: string, runId: string, executionId: number) {
  return db
    .selectFrom('run_transcript as t')
    .innerJoin('runs as r', 'r.id', 't.run_id')
    .select(['t.execution_id', 't.stream', 't.line', 't.at'])
    .where('r.conversation_id', '=', conversationId)
    .where((eb) => eb.or([eb('t.run_id', '<>', runId), eb('t.execution_id', '<', executionId)]))
    .orderBy('r.created_at')
    .orderBy('t.seq')
    .execute();
}
