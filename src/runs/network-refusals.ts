import type { Kysely } from 'kysely';
import type { DB } from '../database.js';
import { type RefusalEntry, refusalsFromEvents } from '../network/index.js';

/**
 * A run's `network_refusals`: what its environment's allow lists refused, over all its executions, read from its
 * timeline (an execution writes each refused host as it happens and its whole account when it ends), so that a
 * worker's runs have it with nothing but their events.
 */
export async function networkRefusals(db: Kysely<DB>, runId: string): Promise<RefusalEntry[]> {
  const events = await db
    .selectFrom('run_events')
    .select(['execution_id', 'event_type', 'payload'])
    .where('run_id', '=', runId)
    .where('event_type', 'in', ['network_refused', 'network_refusals'])
    .orderBy('seq')
    .execute();
  return refusalsFromEvents(events);
}
