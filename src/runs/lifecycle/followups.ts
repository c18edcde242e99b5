import { type Kysely, sql } from 'kysely';
import type { DB } from '../../database.js';
import { invalidRequest, notFound } from '../../platform/http/errors.js';
import { type Visibility, visible } from '../visibility.js';
import { isTerminal, transition } from './states.js';

export type FollowupRoute = 'initial_input' | 'live' | 'new_execution' | 'debug';

interface RunForFollowup {
  state: string;
  execution_id: number;
  conversation_id: string | null;
  status_message: { error_code?: string } | null;
  debug_session: { until: string } | null;
}

/** Where a follow-up goes, by the run's state (the interface's state table). */
export function followupRoute(run: RunForFollowup, now: Date): FollowupRoute {
  const debugWindowOpen = run.debug_session !== null && new Date(run.debug_session.until).getTime() > now.getTime();
  if (run.state === 'FAILED' && run.status_message?.error_code === 'environment_setup_failed' && debugWindowOpen)
    return 'debug';
  if (isTerminal(run.state)) return 'new_execution';
  return run.state === 'INPROGRESS' ? 'live' : 'initial_input';
}

/**
 * Accepts a follow-up. Queued or being prepared: it joins the initial input. Running: the engine holding the run
 * delivers it to the live harness (or, when the harness takes no input, to its next turn). Ended: the run is
 * queued again for a new execution that continues the conversation. Failed setup with the debug window open: it
 * goes to a debug agent in the kept workspace and the run stays FAILED. Locking the run row orders this
 * against the engine ending the execution, so no follow-up is lost between the two.
 */
export async function addFollowup(
  db: Kysely<DB>,
  who: Visibility,
  runId: string,
  message: string,
  mode: string | undefined,
  /** How it was sent, when not with an API key: `shared_link` for a run's EDITOR share link. */
  via?: string,
): Promise<FollowupRoute> {
  return db.transaction().execute(async (trx) => {
    const run = (await trx
      .selectFrom('runs')
      .select(['state', 'execution_id', 'conversation_id', 'status_message', 'debug_session'])
      .where((eb) => visible(eb, who))
      .where('id', '=', runId)
      .forUpdate()
      .executeTakeFirst()) as RunForFollowup | undefined;
    if (!run) throw notFound(`run ${runId} not found`);
    const empty = message.trim() === '';
    if (empty && run.conversation_id === null) {
      throw invalidRequest('message must not be empty: this run has no saved conversation to continue from');
    }
    const route = followupRoute(run, new Date());
    let executionId = run.execution_id;
    const restart = transition('restart');
    if (route === 'new_execution') {
      executionId += 1;
      await trx
        .updateTable('runs')
        .set({
          state: restart.to,
          execution_id: executionId,
          status_message: null,
          ended_at: null,
          debug_session: null,
          // What the ended executions used: the next one adds its own to it (request_usage is the run's total).
          usage_before: sql`request_usage`,
          updated_at: sql`clock_timestamp()`,
        })
        .where('id', '=', runId)
        .execute();
    }
    if (!empty) {
      await trx
        .insertInto('run_inputs')
        .values({
          run_id: runId,
          execution_id: executionId,
          purpose: route === 'debug' ? 'debug' : 'agent',
          message,
          mode: mode ?? null,
        })
        .execute();
    }
    await trx
      .insertInto('run_events')
      .values({
        event_uuid: crypto.randomUUID(),
        run_id: runId,
        execution_id: String(executionId),
        // Every follow-up records it; only an ended run's is the move `restart`.
        event_type: restart.event,
        payload: JSON.stringify({ route, ...(mode ? { mode } : {}), ...(via ? { via } : {}) }),
      })
      .execute();
    return route;
  });
}
