import { type Kysely, sql } from 'kysely';
import type { DB } from '../../database.js';
import { json } from './json.js';
import { stateList } from './state-sql.js';
import { ACTIVE_STATES } from './states.js';

/**
 * Records what an execution has used so far on its run (`request_usage`: the run's earlier executions, kept in
 * `usage_before`, plus this one's, see hangar_usage_total in functions.sql), while it runs: a team's month spend
 * then counts runs in flight, not only ended ones, so a budget is not overshot by runs still going. Conditional
 * on the run still being this execution's (owner, execution, an active state): a late write after the end, a
 * cancel or a takeback changes nothing. The end writes the final figure the same way.
 */
export async function recordUsage(
  db: Kysely<DB>,
  owner: string,
  runId: string,
  executionId: number,
  usage: Record<string, number>,
): Promise<void> {
  await sql`
    UPDATE runs SET request_usage = hangar_usage_total(usage_before, ${json(usage)})
    WHERE id = ${runId} AND lease_owner = ${owner} AND execution_id = ${executionId}
      AND state IN (${stateList(ACTIVE_STATES)})`.execute(db);
}
