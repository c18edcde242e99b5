import { type Kysely, sql } from 'kysely';
import type { DB } from '../../database.js';
import type { FollowupInput } from './types.js';

/** An execution whose agent an engine is about to start. */
export interface AgentStart {
  runId: string;
  executionId: number;
}

/**
 * Records that `owner` is about to spawn the harnesses of these executions' agents, and reads the follow-ups each
 * will be started with (oldest first, left undelivered: the start's transition takes them). One statement for a batch
 * of starts, so the intent costs no statement of its own (every start read its follow-ups this way before: a
 * statement of its own doubled the statements a run costs the engine, 1.1 to 2.2 in the dispatch drain). The engine
 * does it last before the spawn, after everything else the start reads, so that only an engine that died in the spawn
 * itself leaves an intent without a start.
 *
 * The intent is what makes a takeback honest: a process cannot be spawned and its start recorded in one step, so an
 * engine that dies between the two leaves a run CLAIMED whose agent may be running. With the intent recorded first,
 * the takeback ends such a run ERROR (retryable) rather than queueing it to run a second time (leases.ts). Only a run
 * still CLAIMED by `owner` for that execution is marked; the others' starts will not be recorded either.
 */
export async function beginAgentStarts(
  db: Kysely<DB>,
  owner: string,
  starts: AgentStart[],
): Promise<FollowupInput[][]> {
  const runIds = starts.map((start) => start.runId);
  const rows = await sql<{ run_id: string; seq: string; message: string }>`
    WITH marked AS (
      UPDATE runs r SET agent_start_intent = s.execution_id
      FROM unnest(${runIds}::text[], ${starts.map((start) => start.executionId)}::int[]) AS s(run_id, execution_id)
      WHERE r.id = s.run_id AND r.execution_id = s.execution_id AND r.lease_owner = ${owner} AND r.state = 'CLAIMED'
    )
    SELECT run_id, seq::text AS seq, message FROM run_inputs
    WHERE run_id = ANY(${runIds}::text[]) AND purpose = 'agent' AND delivered_at IS NULL
    ORDER BY seq`.execute(db);
  return runIds.map((runId) =>
    rows.rows.filter((row) => row.run_id === runId).map(({ seq, message }) => ({ seq, message })),
  );
}
