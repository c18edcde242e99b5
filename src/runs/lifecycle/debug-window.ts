import { type Kysely, sql } from 'kysely';
import type { DB } from '../../database.js';
import { json } from './json.js';

/**
 * The debug window after a failed environment setup: the run stays FAILED while debug agents work in its kept
 * workspace. Each debug turn is an execution of its own (its transcript and conversation step).
 */

/** Starts a debug turn: the run's next execution, with a sandbox. Undefined when the run is no longer FAILED. */
export async function startDebugTurn(
  db: Kysely<DB>,
  runId: string,
  conversationId: string,
): Promise<number | undefined> {
  const next = await sql<{ execution_id: number }>`
    UPDATE runs SET execution_id = execution_id + 1, sandbox_running = true, updated_at = clock_timestamp(),
      conversation_id = coalesce(conversation_id, ${conversationId})
    WHERE id = ${runId} AND state = 'FAILED' RETURNING execution_id`.execute(db);
  return next.rows[0]?.execution_id;
}

/** A debug turn ended: the window now closes at `until`. */
export async function endDebugTurn(db: Kysely<DB>, runId: string, until: Date): Promise<void> {
  await sql`
    UPDATE runs SET sandbox_running = false, updated_at = clock_timestamp(),
      status_message = status_message || ${json({ session_debug_until: until.toISOString() })},
      debug_session = debug_session || ${json({ until: until.toISOString() })}
    WHERE id = ${runId}`.execute(db);
}

/** The window closed: the kept workspace is gone. */
export async function closeDebugWindow(db: Kysely<DB>, runId: string): Promise<void> {
  await sql`UPDATE runs SET debug_session = NULL, sandbox_running = false WHERE id = ${runId}`.execute(db);
}
