import { randomUUID } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import type { DB } from '../../database.js';
import { type Visibility, visible } from '../visibility.js';
import type { NamedTransition } from './states.js';

/**
 * Cancels (the move `cancel` or `operator_cancel`) only if the run is still in one of its from-states, in one conditional statement: of two concurrent cancels exactly
 * one changes the row and writes the timeline event. `who: 'operator'` is an instance administrator: any team's
 * run, of any kind.
 */
export async function cancelRunIfActive(
  db: Kysely<DB>,
  who: Visibility | 'operator',
  runId: string,
  cancelledBy: string,
  move: NamedTransition<'cancel' | 'operator_cancel'>,
): Promise<boolean> {
  const statusMessage = JSON.stringify({ message: `Cancelled by ${cancelledBy}` });
  const result = await db
    .with('cancelled', (qb) =>
      qb
        .updateTable('runs')
        .set({
          state: move.to,
          status_message: statusMessage,
          ended_at: sql`clock_timestamp()`,
          updated_at: sql`clock_timestamp()`,
        })
        .where((eb) => (who === 'operator' ? eb.lit(true) : visible(eb, who)))
        .where('runs.id', '=', runId)
        .where('runs.state', 'in', move.from)
        .returning('id'),
    )
    .insertInto('run_events')
    .columns(['event_uuid', 'run_id', 'event_type', 'payload'])
    .expression((eb) =>
      eb
        .selectFrom('cancelled')
        .select([
          sql.lit(randomUUID()).as('event_uuid'),
          'cancelled.id',
          sql.lit(move.event).as('event_type'),
          sql<string>`${JSON.stringify({ cancelled_by: cancelledBy })}::jsonb`.as('payload'),
        ]),
    )
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
}
