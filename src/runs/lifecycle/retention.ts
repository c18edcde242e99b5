import { type Kysely, sql } from 'kysely';
import type { DB } from '../../database.js';
import { stateList } from './state-sql.js';
import { TERMINAL_STATES } from './states.js';

/** The metadata key (value `true`) by which a team pins a run: retention never deletes it. */
export const KEEP_METADATA_KEY = 'keep';

/**
 * Deletes up to `batch` runs that ended before `endedBefore`, oldest first, with everything that is theirs (events,
 * inputs, transcript, attachments, artifacts, scores: by the foreign keys' cascade), in one short statement.
 * Kept: runs pinned with metadata `keep: "true"`, runs whose debug window is open, and runs that have not ended.
 * Returns the deleted runs' artifact blob keys, for the caller to delete from the blob store once committed.
 */
export async function deleteEndedRuns(
  db: Kysely<DB>,
  endedBefore: Date,
  batch: number,
): Promise<{ runs: number; blobKeys: string[] }> {
  return db.transaction().execute(async (trx) => {
    // SKIP LOCKED: rows another writer holds (a follow-up continuing a run) are left for the next pass.
    const doomed = await sql<{ id: string }>`
      SELECT id FROM runs
      WHERE ended_at IS NOT NULL AND ended_at < ${endedBefore}
        AND state IN (${stateList(TERMINAL_STATES)})
        AND debug_session IS NULL
        AND coalesce(metadata ->> ${KEEP_METADATA_KEY}, '') <> 'true'
        -- A conversation goes whole: none of its runs while a later one is still going or recent (its history).
        AND (conversation_id IS NULL OR NOT EXISTS (
          SELECT 1 FROM runs later WHERE later.conversation_id = runs.conversation_id
            AND (later.ended_at IS NULL OR later.ended_at >= ${endedBefore} OR later.debug_session IS NOT NULL)))
      ORDER BY ended_at
      LIMIT ${batch}
      FOR UPDATE SKIP LOCKED`.execute(trx);
    const ids = doomed.rows.map((row) => row.id);
    if (ids.length === 0) return { runs: 0, blobKeys: [] };
    const blobs = await sql<{ blob_key: string }>`
      SELECT blob_key FROM artifacts WHERE run_id = ANY(${ids}::text[]) AND blob_key IS NOT NULL`.execute(trx);
    await sql`DELETE FROM runs WHERE id = ANY(${ids}::text[])`.execute(trx);
    return { runs: ids.length, blobKeys: blobs.rows.map((row) => row.blob_key) };
  });
}
