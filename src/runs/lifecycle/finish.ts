import { type Kysely, sql } from 'kysely';
import type { DB } from '../../database.js';
import { storableJson, storableText } from '../../platform/db/storable-text.js';
import { metricsServed } from '../../platform/metrics.js';
import { json, nullableJson } from './json.js';
import { type EndedColumns, secondsBetween } from './metrics.js';
import { stateList } from './state-sql.js';
import { END_TRANSITIONS, isActive, transition } from './states.js';
import { insertEvents } from './transitions.js';
import type { Finish, FinishResult, TimelineEvent } from './types.js';

/** The events an end writes: the ones before it (the sandbox going away), then its end transition's. */
function endEvents(item: Finish): TimelineEvent[] {
  return [...item.before, { type: END_TRANSITIONS[item.outcome.state].event, payload: item.outcome.eventPayload }];
}

/**
 * Ends executions of this engine, many in one round trip (`hangar_finish_executions`, in functions.sql), with
 * their last transcript lines. Follow-ups that arrived while an execution ran and were not delivered start the
 * next execution instead of ending the run (unless it failed): those runs, and runs no longer this engine's, are
 * settled afterwards one by one with their row locked.
 */
export async function finishExecutions(
  db: Kysely<DB>,
  engineId: string,
  items: Finish[],
): Promise<{ results: FinishResult[]; ended: Map<string, EndedColumns> }> {
  // Each outcome's state names its end (succeed, block, fail, error): from any held state, in the function's WHERE.
  const outcomes = items.map((item) => item.outcome);
  const lines = items.flatMap((item) => item.transcript ?? []);
  const call = sql`hangar_finish_executions(${engineId},
      ${items.map((item) => item.runId)}::text[], ${items.map((item) => item.executionId)}::int[],
      ${outcomes.map((outcome) => outcome.state)}::text[], ${outcomes.map((outcome) => nullableJson(outcome.statusMessage))}::text[],
      ${outcomes.map((outcome) => nullableJson(outcome.usage))}::text[], ${outcomes.map((outcome) => nullableJson(outcome.debugSession))}::text[],
      ${items.map((item) => storableJson(endEvents(item)))}::text[],
      ${lines.map((line) => line.run_id)}::text[], ${lines.map((line) => line.execution_id)}::int[],
      ${lines.map((line) => line.stream)}::text[], ${lines.map((line) => storableText(line.line))}::text[])`;
  // While /metrics is served, the ended runs' columns its figures need come back with the end (rather than in a
  // statement of their own per batch). The function's columns are fixed (see claims.ts), so they are read beside
  // it, from each row as it was when the statement began: the end changes none of them, and its end time is the
  // statement's clock, microseconds after the function's.
  const ended = metricsServed()
    ? await sql<EndedColumns>`
        SELECT e.id, r.source, r.harness, r.model_id,
          ${secondsBetween('r.created_at')} AS run_seconds, ${secondsBetween('r.started_at')} AS agent_seconds
        FROM ${call} AS e
        LEFT JOIN LATERAL (SELECT source, harness, model_id, created_at, started_at FROM runs WHERE runs.id = e.id OFFSET 0) r ON true`.execute(
        db,
      )
    : await sql<{ id: string }>`SELECT id FROM ${call}`.execute(db);
  const columns = new Map<string, EndedColumns>();
  for (const row of ended.rows as Array<{ id: string } & Partial<EndedColumns>>)
    if (typeof row.run_seconds === 'number') columns.set(row.id, row as EndedColumns);
  const endedIds = new Set(ended.rows.map((row) => row.id));
  const results: FinishResult[] = [];
  for (const item of items) results.push(endedIds.has(item.runId) ? 'ended' : await settleNotEnded(db, engineId, item));
  return { results, ended: columns };
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

/** The rarer ends, in a transaction with the row locked: the run continues, or is not ours. */
async function continueOrLose(trx: Kysely<DB>, engineId: string, item: Finish): Promise<FinishResult> {
  const { runId, executionId, outcome } = item;
  const current = await sql<{ state: string; lease_owner: string | null; execution_id: number }>`
    SELECT state, lease_owner, execution_id FROM runs WHERE id = ${runId}`.execute(trx);
  const row = current.rows[0];
  if (!row) return 'lost';
  if (row.lease_owner !== engineId || !isActive(row.state) || row.execution_id !== executionId) {
    // Cancelled or taken back: the sandbox is gone all the same.
    await insertEvents(
      trx,
      item.before.map((event) => ({ runId, executionId, event })),
    );
    return 'lost';
  }
  // Only a success or a question with follow-ups waiting gets here: they start the next execution (`continue`).
  const continued = transition('continue');
  await insertEvents(
    trx,
    endEvents(item).map((event) => ({ runId, executionId, event })),
  );
  const next = executionId + 1;
  await sql`UPDATE run_inputs SET execution_id = ${next} WHERE run_id = ${runId} AND delivered_at IS NULL AND purpose = 'agent'`.execute(
    trx,
  );
  // The run's usage so far (its earlier executions and this one) is the next execution's usage_before: the run's
  // request_usage stays the total over all its executions.
  const usage = outcome.usage ? json(outcome.usage) : sql`NULL::jsonb`;
  await sql`
    UPDATE runs SET state = ${stateList([continued.to])}, execution_id = ${next}, lease_owner = NULL, lease_expires_at = NULL,
      sandbox_running = false, status_message = NULL, updated_at = clock_timestamp(),
      request_usage = coalesce(hangar_usage_total(usage_before, ${usage}), request_usage),
      usage_before = coalesce(hangar_usage_total(usage_before, ${usage}), request_usage)
    WHERE id = ${runId}`.execute(trx);
  await insertEvents(trx, [
    {
      runId,
      executionId: next,
      event: { type: continued.event, payload: { reason: 'follow-ups arrived while the previous execution ran' } },
    },
  ]);
  return 'continued';
}
