import { type Kysely, sql } from 'kysely';
import type { DB } from '../../database.js';
import { storableJson, storableText } from '../../platform/db/storable-text.js';
import { type NamedTransition, namesOf, RefusedTransitionError, type TransitionName, transition } from './states.js';
import type { EventRow, TranscriptRow, Transition, TransitionResult } from './types.js';

/**
 * Inserts the timeline events that the rows of CTE `source` (columns id, execution_id) carry as a JSON array
 * `events` of `{type, payload}`, in array order per run. (Ends do the same inside hangar_finish_executions.)
 */
const insertCarriedEvents = (source: 'moved') => sql`
  INSERT INTO run_events (event_uuid, run_id, execution_id, event_type, payload)
  SELECT gen_random_uuid()::text, s.id, s.execution_id::text, x.value->>'type', x.value->'payload'
  FROM ${sql.table(source)} s CROSS JOIN LATERAL jsonb_array_elements(s.events::jsonb) WITH ORDINALITY AS x(value, n)
  ORDER BY s.id, x.n`;

/** The moves an executor makes step by step, each with its own events: its take of a run and its agent's start. */
const STEPS: readonly TransitionName[] = ['take', 'start'];

/** The step from -> to is; throws unless it is one of STEPS. */
export function stepOf(from: string, to: string): NamedTransition<TransitionName> {
  const name = namesOf(from, to).find((candidate) => STEPS.includes(candidate));
  if (!name) throw new RefusedTransitionError(from, to);
  return transition(name);
}

/**
 * Applies many steps (`take`, `start`) of one executor in one statement (see Batcher): each row moves only if it is
 * still ours.
 */
export async function applyTransitions(
  db: Kysely<DB>,
  engineId: string,
  items: Transition[],
): Promise<TransitionResult[]> {
  for (const item of items) stepOf(item.from, item.to);
  const result = await sql<{ id: string; inputs: string[] }>`
    WITH input AS (
      SELECT * FROM unnest(
        ${items.map((item) => item.runId)}::text[], ${items.map((item) => item.executionId)}::int[],
        ${items.map((item) => item.from)}::text[], ${items.map((item) => item.to)}::text[],
        ${items.map((item) => item.started ?? false)}::bool[], ${items.map((item) => item.conversationId ?? null)}::text[],
        ${items.map((item) => item.harness ?? null)}::text[], ${items.map((item) => item.takeInputs ?? false)}::bool[],
        ${items.map((item) => storableJson(item.events))}::text[], ${items.map((item) => item.modelId ?? null)}::text[],
        ${items.map((item) => item.takeInputsUpTo ?? null)}::bigint[]
      ) AS i(id, execution_id, from_state, to_state, started, conversation_id, harness, take_inputs, events, model_id,
        take_inputs_up_to)
    ), moved AS (
      UPDATE runs r SET state = i.to_state, updated_at = clock_timestamp(),
        started_at = CASE WHEN i.started THEN coalesce(r.started_at, clock_timestamp()) ELSE r.started_at END,
        -- This execution's agent start: its run time counts from here (hangar_run_times adds it up at its end).
        agent_started_at = CASE WHEN i.started THEN coalesce(r.agent_started_at, clock_timestamp()) ELSE r.agent_started_at END,
        sandbox_running = r.sandbox_running OR i.started,
        conversation_id = coalesce(r.conversation_id, i.conversation_id),
        harness = coalesce(i.harness, r.harness),
        model_id = coalesce(r.model_id, i.model_id)
      FROM input i
      WHERE r.id = i.id AND r.state = i.from_state AND r.lease_owner = ${engineId} AND r.execution_id = i.execution_id
      RETURNING r.id, i.execution_id, i.take_inputs, i.take_inputs_up_to, i.events
    ), events AS (${insertCarriedEvents('moved')}), taken AS (
      UPDATE run_inputs ri SET delivered_at = clock_timestamp()
      FROM moved m
      WHERE ri.run_id = m.id AND m.take_inputs AND ri.purpose = 'agent' AND ri.delivered_at IS NULL
        AND (m.take_inputs_up_to IS NULL OR ri.seq <= m.take_inputs_up_to)
      RETURNING ri.run_id, ri.seq, ri.message
    )
    SELECT m.id, coalesce((SELECT array_agg(t.message ORDER BY t.seq) FROM taken t WHERE t.run_id = m.id), '{}') AS inputs
    FROM moved m`.execute(db);
  const moved = new Map(result.rows.map((row) => [row.id, row.inputs]));
  return items.map((item) => ({ moved: moved.has(item.runId), inputs: moved.get(item.runId) ?? [] }));
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

/** Follow-ups not yet given to a harness, oldest first; marks them delivered. */
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

export async function appendTranscript(db: Kysely<DB>, rows: TranscriptRow[]): Promise<void> {
  if (rows.length === 0) return;
  // Four array parameters whatever the number of lines (a VALUES list would hit the 65,535-parameter limit).
  await sql`
    INSERT INTO run_transcript (run_id, execution_id, stream, line)
    SELECT * FROM unnest(${rows.map((row) => row.run_id)}::text[], ${rows.map((row) => row.execution_id)}::int[],
      ${rows.map((row) => row.stream)}::text[], ${rows.map((row) => storableText(row.line))}::text[])`.execute(db);
}
