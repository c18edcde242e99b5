import { sql, type Kysely } from 'kysely';
import type { DB } from '../platform/db/schema.js';
import { storableJson, storableText } from '../platform/db/storable-text.js';

/** Queries of the execution engine: claims, leases, transitions, follow-up inputs and the transcript. */

export const ACTIVE_STATES = ['PENDING', 'CLAIMED', 'INPROGRESS'] as const;
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
  /** Files that come with the run, to write into its workspace (see runAttachments). */
  attachment_count: number;
  /**
   * CLAIMED when the claimer is the executor (the server's engine takes a run through PENDING in its claim);
   * PENDING when the executor still has to take it (a run assigned to a self-hosted worker).
   */
  state: 'PENDING' | 'CLAIMED';
}

/** A file that comes with a run: an API attachment or a webhook delivery's payload. */
export interface RunFile {
  file_name: string;
  data: Buffer;
}

export async function runAttachments(db: Kysely<DB>, runId: string): Promise<RunFile[]> {
  return db
    .selectFrom('run_attachments')
    .select(['file_name', 'data'])
    .where('run_id', '=', runId)
    .orderBy('position')
    .execute();
}

export interface Limits {
  global: number;
  perTeam: number;
}

const json = (value: unknown) => sql`${storableJson(value)}::jsonb`;

/**
 * Moves up to `batch` queued runs through PENDING to CLAIMED under this engine's lease, oldest first, without passing
 * the global or per-team limit of runs in PENDING, CLAIMED or INPROGRESS (the function `hangar_claim_runs`,
 * migrations 0007 and 0012).
 */
export async function claimRuns(
  db: Kysely<DB>,
  engineId: string,
  leaseSeconds: number,
  limits: Limits,
  batch: number,
): Promise<ClaimedRun[]> {
  const claimed = await sql<ClaimedRun>`
    SELECT * FROM hangar_claim_runs(${engineId}, ${leaseSeconds}::int, ${limits.perTeam}::int, ${limits.global}::int, ${batch}::int, ${CLAIM_SCAN}::int)`.execute(
    db,
  );
  return claimed.rows;
}

/** Active runs a caller's new run would wait behind: whether the limits are reached right now. */
export async function atCapacity(db: Kysely<DB>, teamUid: string, limits: Limits): Promise<boolean> {
  const row = await sql<{ total: number; team: number }>`
    SELECT count(*)::int AS total, count(*) FILTER (WHERE team_uid = ${teamUid})::int AS team
    FROM runs WHERE state IN ('PENDING', 'CLAIMED', 'INPROGRESS') AND worker_host IS NULL`.execute(db);
  const counts = row.rows[0]!;
  return counts.total >= limits.global || counts.team >= limits.perTeam;
}

export interface TimelineEvent {
  type: string;
  payload?: Record<string, unknown> | undefined;
}

/** One owned run moving from one active state to the next, with its timeline events. */
export interface Transition {
  runId: string;
  executionId: number;
  from: string;
  to: string;
  events: TimelineEvent[];
  /** The agent starts: sets started_at (first time only) and marks the sandbox running. */
  started?: boolean;
  conversationId?: string;
  harness?: string;
  /** The catalogue model a built-in harness uses (the run's own, or the default it fell back to). */
  modelId?: string;
  /** Also take the run's follow-ups not yet given to its agent (oldest first), in the same statement. */
  takeInputs?: boolean;
}

/**
 * Inserts the timeline events that the rows of CTE `source` (columns id, execution_id) carry as a JSON array
 * `events` of `{type, payload}`, in array order per run. (Ends do the same inside hangar_finish_executions.)
 */
const insertCarriedEvents = (source: 'moved') => sql`
  INSERT INTO run_events (event_uuid, run_id, execution_id, event_type, payload)
  SELECT gen_random_uuid()::text, s.id, s.execution_id::text, x.value->>'type', x.value->'payload'
  FROM ${sql.table(source)} s CROSS JOIN LATERAL jsonb_array_elements(s.events::jsonb) WITH ORDINALITY AS x(value, n)
  ORDER BY s.id, x.n`;

export interface TransitionResult {
  /** False when the run is no longer this engine's execution in that state (cancelled, or taken back). */
  moved: boolean;
  inputs: string[];
}

/** Applies many engine transitions in one statement (see Batcher): each row moves only if it is still ours. */
export async function applyTransitions(
  db: Kysely<DB>,
  engineId: string,
  items: Transition[],
): Promise<TransitionResult[]> {
  const result = await sql<{ id: string; inputs: string[] }>`
    WITH input AS (
      SELECT * FROM unnest(
        ${items.map((item) => item.runId)}::text[], ${items.map((item) => item.executionId)}::int[],
        ${items.map((item) => item.from)}::text[], ${items.map((item) => item.to)}::text[],
        ${items.map((item) => item.started ?? false)}::bool[], ${items.map((item) => item.conversationId ?? null)}::text[],
        ${items.map((item) => item.harness ?? null)}::text[], ${items.map((item) => item.takeInputs ?? false)}::bool[],
        ${items.map((item) => storableJson(item.events))}::text[], ${items.map((item) => item.modelId ?? null)}::text[]
      ) AS i(id, execution_id, from_state, to_state, started, conversation_id, harness, take_inputs, events, model_id)
    ), moved AS (
      UPDATE runs r SET state = i.to_state, updated_at = clock_timestamp(),
        started_at = CASE WHEN i.started THEN coalesce(r.started_at, clock_timestamp()) ELSE r.started_at END,
        sandbox_running = r.sandbox_running OR i.started,
        conversation_id = coalesce(r.conversation_id, i.conversation_id),
        harness = coalesce(i.harness, r.harness),
        model_id = coalesce(r.model_id, i.model_id)
      FROM input i
      WHERE r.id = i.id AND r.state = i.from_state AND r.lease_owner = ${engineId} AND r.execution_id = i.execution_id
      RETURNING r.id, i.execution_id, i.take_inputs, i.events
    ), events AS (${insertCarriedEvents('moved')}), taken AS (
      UPDATE run_inputs SET delivered_at = clock_timestamp()
      WHERE run_id IN (SELECT id FROM moved WHERE take_inputs) AND purpose = 'agent' AND delivered_at IS NULL
      RETURNING run_id, seq, message
    )
    SELECT m.id, coalesce((SELECT array_agg(t.message ORDER BY t.seq) FROM taken t WHERE t.run_id = m.id), '{}') AS inputs
    FROM moved m`.execute(db);
  const moved = new Map(result.rows.map((row) => [row.id, row.inputs]));
  return items.map((item) => ({ moved: moved.has(item.runId), inputs: moved.get(item.runId) ?? [] }));
}

export interface EventRow {
  runId: string;
  executionId: number;
  event: TimelineEvent;
}

/** Appends timeline events of any runs, in the order given. */
export async function insertEvents(db: Kysely<DB>, rows: EventRow[]): Promise<void> {
  if (rows.length === 0) return;
  await db
    .insertInto('run_events')
    .values(
      rows.map(({ runId, executionId, event }) => ({
        event_uuid: crypto.randomUUID(),
        run_id: runId,
        execution_id: String(executionId),
        event_type: event.type,
        payload: event.payload ? storableJson(event.payload) : null,
      })),
    )
    .execute();
}

export async function recordEvent(
  db: Kysely<DB>,
  runId: string,
  executionId: number,
  type: string,
  payload?: Record<string, unknown>,
): Promise<void> {
  await insertEvents(db, [{ runId, executionId, event: { type, payload } }]);
}

/** Follow-ups not yet given to a harness, oldest first; marks them delivered. */
export async function takeInputs(db: Kysely<DB>, runId: string, purpose: 'agent' | 'debug'): Promise<string[]> {
  return (await takeInputRows(db, runId, purpose)).map((row) => row.message);
}

export async function takeInputRows(
  db: Kysely<DB>,
  runId: string,
  purpose: 'agent' | 'debug',
): Promise<Array<{ seq: string; message: string }>> {
  const rows = await sql<{ message: string; seq: string }>`
    UPDATE run_inputs SET delivered_at = clock_timestamp()
    WHERE run_id = ${runId} AND purpose = ${purpose} AND delivered_at IS NULL
    RETURNING message, seq`.execute(db);
  return rows.rows.sort((a, b) => Number(a.seq) - Number(b.seq));
}

/** Follow-ups that could not be written to the harness after all: the next execution takes them. */
export async function returnInputs(db: Kysely<DB>, runId: string, seqs: string[]): Promise<void> {
  if (seqs.length === 0) return;
  await db
    .updateTable('run_inputs')
    .set({ delivered_at: null })
    .where('run_id', '=', runId)
    .where('seq', 'in', seqs as never[])
    .execute();
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

export interface Finish {
  runId: string;
  executionId: number;
  outcome: Outcome;
  /** Events before the outcome's own (`vm_shutdown`), recorded whenever the execution is still ours. */
  before: TimelineEvent[];
  /** The execution's last transcript lines, written with the end (always, like any transcript line). */
  transcript?: TranscriptRow[];
}

/** `ended`, `continued` (follow-ups were waiting: the run is queued for its next execution), or `lost` (no longer ours). */
export type FinishResult = 'ended' | 'continued' | 'lost';

/**
 * Ends executions of this engine, many in one round trip (the function `hangar_finish_executions`, migration 0012),
 * with their last transcript lines. Follow-ups that arrived while an execution ran and were not delivered start
 * the next execution instead of ending the run (unless it failed): those runs, and runs no longer this engine's,
 * are settled afterwards one by one with their row locked.
 */
export async function finishExecutions(db: Kysely<DB>, engineId: string, items: Finish[]): Promise<FinishResult[]> {
  const outcomes = items.map((item) => item.outcome);
  const lines = items.flatMap((item) => item.transcript ?? []);
  const ended = await sql<{ id: string }>`
    SELECT id FROM hangar_finish_executions(${engineId},
      ${items.map((item) => item.runId)}::text[], ${items.map((item) => item.executionId)}::int[],
      ${outcomes.map((outcome) => outcome.state)}::text[], ${outcomes.map((outcome) => nullableJson(outcome.statusMessage))}::text[],
      ${outcomes.map((outcome) => nullableJson(outcome.usage))}::text[], ${outcomes.map((outcome) => nullableJson(outcome.debugSession))}::text[],
      ${items.map((item) => storableJson([...item.before, { type: item.outcome.eventType, payload: item.outcome.eventPayload }]))}::text[],
      ${lines.map((line) => line.run_id)}::text[], ${lines.map((line) => line.execution_id)}::int[],
      ${lines.map((line) => line.stream)}::text[], ${lines.map((line) => storableText(line.line))}::text[])`.execute(
    db,
  );
  const endedIds = new Set(ended.rows.map((row) => row.id));
  const results: FinishResult[] = [];
  for (const item of items) results.push(endedIds.has(item.runId) ? 'ended' : await settleNotEnded(db, engineId, item));
  return results;
}

/** Attempts at settling a run the batch did not end, each one transaction that reads the run again under its lock. */
const SETTLE_ATTEMPTS = 3;

/**
 * The rarer ends, after the batch has committed: this never throws, because a failed batch is written again item
 * by item (see Batcher), which would repeat the ends already committed. A run that cannot be settled is left to its
 * lease: it expires (the execution no longer renews it) and the run ends ERROR, retryable.
 */
async function settleNotEnded(db: Kysely<DB>, engineId: string, item: Finish): Promise<FinishResult> {
  for (let attempt = 1; attempt <= SETTLE_ATTEMPTS; attempt++) {
    try {
      return await db.transaction().execute(async (trx) => {
        await sql`SELECT id FROM runs WHERE id = ${item.runId} FOR NO KEY UPDATE`.execute(trx);
        return continueOrLose(trx, engineId, item);
      });
    } catch {
      // A deadlock or a lost connection: the transaction rolled back, so trying again repeats nothing.
    }
  }
  return 'lost';
}

const nullableJson = (value: unknown) => (value === null || value === undefined ? null : storableJson(value));

/** The rarer ends, in a transaction with the row locked: the run continues, or is not ours. */
async function continueOrLose(trx: Kysely<DB>, engineId: string, item: Finish): Promise<FinishResult> {
  const { runId, executionId, outcome } = item;
  const current = await sql<{ state: string; lease_owner: string | null; execution_id: number }>`
    SELECT state, lease_owner, execution_id FROM runs WHERE id = ${runId}`.execute(trx);
  const row = current.rows[0];
  if (!row) return 'lost';
  if (
    row.lease_owner !== engineId ||
    !(ACTIVE_STATES as readonly string[]).includes(row.state) ||
    row.execution_id !== executionId
  ) {
    // Cancelled or taken back: the sandbox is gone all the same.
    await insertEvents(
      trx,
      item.before.map((event) => ({ runId, executionId, event })),
    );
    return 'lost';
  }
  // Only a success or a question with follow-ups waiting gets here: they start the next execution.
  await insertEvents(
    trx,
    [...item.before, { type: outcome.eventType, payload: outcome.eventPayload }].map((event) => ({
      runId,
      executionId,
      event,
    })),
  );
  const next = executionId + 1;
  await sql`UPDATE run_inputs SET execution_id = ${next} WHERE run_id = ${runId} AND delivered_at IS NULL AND purpose = 'agent'`.execute(
    trx,
  );
  await sql`
    UPDATE runs SET state = 'QUEUED', execution_id = ${next}, lease_owner = NULL, lease_expires_at = NULL,
      sandbox_running = false, status_message = NULL, updated_at = clock_timestamp(),
      request_usage = coalesce(${outcome.usage ? json(outcome.usage) : null}, request_usage)
    WHERE id = ${runId}`.execute(trx);
  await recordEvent(trx, runId, next, 'run_continued', {
    reason: 'follow-ups arrived while the previous execution ran',
  });
  return 'continued';
}

/** Puts an owned run that never reached its agent back in the queue (the engine is shutting down). */
export async function requeue(
  db: Kysely<DB>,
  run: { id: string; engineId: string; executionId: number },
  reason: string,
): Promise<void> {
  await sql`
    WITH moved AS (
      UPDATE runs SET state = 'QUEUED', lease_owner = NULL, lease_expires_at = NULL, sandbox_running = false, updated_at = clock_timestamp()
      WHERE id = ${run.id} AND lease_owner = ${run.engineId} AND state IN ('PENDING', 'CLAIMED') RETURNING id
    )
    INSERT INTO run_events (event_uuid, run_id, execution_id, event_type, payload)
    SELECT gen_random_uuid()::text, id, ${String(run.executionId)}, 'run_requeued', ${json({ reason })} FROM moved`.execute(
    db,
  );
}

/**
 * Extends this engine's leases; returns the runs it still holds (the others were cancelled or taken back). Rows
 * another statement of this engine has locked (a batch ending them) are skipped, not waited for: locking many rows
 * in no particular order could deadlock with that batch. Their leases are renewed on the next round.
 */
export async function renewLeases(
  db: Kysely<DB>,
  engineId: string,
  runIds: string[],
  leaseSeconds: number,
): Promise<Set<string>> {
  if (runIds.length === 0) return new Set();
  const rows = await sql<{ id: string }>`
    WITH held AS (
      SELECT id FROM runs WHERE id = ANY(${runIds}::text[]) AND lease_owner = ${engineId} AND state IN ('PENDING', 'CLAIMED', 'INPROGRESS')
    ), renewed AS (
      UPDATE runs SET lease_expires_at = clock_timestamp() + make_interval(secs => ${leaseSeconds})
      WHERE id IN (SELECT id FROM runs WHERE id IN (SELECT id FROM held) FOR NO KEY UPDATE SKIP LOCKED)
        AND lease_owner = ${engineId} AND state IN ('PENDING', 'CLAIMED', 'INPROGRESS')
    )
    SELECT id FROM held`.execute(db);
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
  // Four array parameters whatever the number of lines (a VALUES list would hit the 65,535-parameter limit).
  await sql`
    INSERT INTO run_transcript (run_id, execution_id, stream, line)
    SELECT * FROM unnest(${rows.map((row) => row.run_id)}::text[], ${rows.map((row) => row.execution_id)}::int[],
      ${rows.map((row) => row.stream)}::text[], ${rows.map((row) => storableText(row.line))}::text[])`.execute(db);
}

/**
 * After a cancel has stopped the harness: the run no longer has a sandbox. Only while the cancelled execution is
 * still the run's latest and its executor's (a follow-up may have started the next one elsewhere meanwhile).
 */
export async function clearSandboxIfCancelled(
  db: Kysely<DB>,
  owner: string,
  runId: string,
  executionId: number,
): Promise<void> {
  await db
    .updateTable('runs')
    .set({ sandbox_running: false })
    .where('id', '=', runId)
    .where('lease_owner', '=', owner)
    .where('execution_id', '=', executionId)
    .where('state', '=', 'CANCELLED')
    .execute();
}

/**
 * The transcript of every execution of the runs in `conversationId` before (runId, executionId), in order. Only
 * the runs of runId's team count: a conversation ID a worker reported can never pull in another team's runs.
 */
export async function conversationHistory(db: Kysely<DB>, conversationId: string, runId: string, executionId: number) {
  return db
    .selectFrom('run_transcript as t')
    .innerJoin('runs as r', 'r.id', 't.run_id')
    .select(['t.execution_id', 't.stream', 't.line', 't.at'])
    .where('r.conversation_id', '=', conversationId)
    .where('r.team_uid', '=', (eb) => eb.selectFrom('runs as own').select('own.team_uid').where('own.id', '=', runId))
    .where((eb) => eb.or([eb('t.run_id', '<>', runId), eb('t.execution_id', '<', executionId)]))
    .orderBy('r.created_at')
    .orderBy('t.seq')
    .execute();
}
