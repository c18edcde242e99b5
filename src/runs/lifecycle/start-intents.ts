import { sql, type Kysely } from 'kysely';
import type { DB } from '../../database.js';

/** An execution whose agent an engine is about to start. */
export interface AgentStart {
  runId: string;
  executionId: number;
}

/**
 * Records that `owner` is about to spawn the harnesses of these executions' agents, in one statement for a batch of
 * starts (the engine's writes are batched the same way). Written right before the spawn, after everything else the
 * start reads, so that only an engine that died in the spawn itself leaves an intent without a start.
 *
 * The intent is what makes a takeback honest: a process cannot be spawned and its start recorded in one step, so an
 * engine that dies between the two leaves a run CLAIMED whose agent may be running. With the intent recorded first,
 * the takeback ends such a run ERROR (retryable) rather than queueing it to run a second time (leases.ts). Only a run
 * still CLAIMED by `owner` for that execution is marked; the others' starts will not be recorded either.
 */
export async function markAgentStarts(db: Kysely<DB>, owner: string, starts: AgentStart[]): Promise<void> {
  await sql`
    UPDATE runs r SET agent_start_intent = s.execution_id
    FROM unnest(${starts.map((start) => start.runId)}::text[], ${starts.map((start) => start.executionId)}::int[])
      AS s(run_id, execution_id)
    WHERE r.id = s.run_id AND r.execution_id = s.execution_id AND r.lease_owner = ${owner} AND r.state = 'CLAIMED'`.execute(
    db,
  );
}
