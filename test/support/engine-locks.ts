import type pg from 'pg';
import { eventually } from './engine.js';

/**
 * Resolves once another session (an engine) waits for the lock `client` holds on the transcript table: the tests that
 * hold an engine between reading a follow-up's conversation and starting its harness wait for it there.
 */
export async function engineWaitsOnTranscript(client: pg.Client): Promise<void> {
  await eventually(
    'the engine waits on the transcript table',
    async () =>
      (
        await client.query(
          `SELECT 1 FROM pg_locks WHERE NOT granted AND relation = 'run_transcript'::regclass AND pid <> pg_backend_pid()`,
        )
      ).rows.length > 0,
  );
}
