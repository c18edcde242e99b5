import type { Kysely } from 'kysely';
import type { DB } from '../database.js';

/** Reads of the execution engine: a run's files and its conversation's transcript. Writes go through RunLifecycle. */

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
