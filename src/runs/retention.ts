import type { FastifyBaseLogger } from 'fastify';
import type { BlobStore } from '../platform/blobs/store.js';
import { PollingLoop } from '../platform/loop.js';
import type { RunLifecycle } from './lifecycle/run-lifecycle.js';

/** Runs deleted per statement: each batch is a short transaction, so lists and writes never wait long behind it. */
export const RETENTION_BATCH = 200;
/**
 * A pause between batches, so the API's queries get their turn: PGlite is one connection in this process (each
 * batch holds it and the event loop), and on PostgreSQL it leaves the I/O to the requests for a moment.
 */
const PAUSE_MS = 25;

/**
 * One retention pass: deletes the runs ended more than `days` ago, a batch at a time until none is left, then
 * the bytes of their artifacts from the blob store. A blob that cannot be deleted is logged and left (an orphan
 * costs space, never access: its row is gone). `afterDeleting` runs once something was deleted (PGlite's VACUUM).
 */
export async function deleteExpiredRuns(options: {
  lifecycle: RunLifecycle;
  blobs: BlobStore;
  days: number;
  log: FastifyBaseLogger;
  now?: () => Date;
  batch?: number;
  pauseMs?: number;
  afterDeleting?: () => Promise<void>;
}): Promise<number> {
  const batch = options.batch ?? RETENTION_BATCH;
  const cutoff = new Date((options.now?.() ?? new Date()).getTime() - options.days * 86_400_000);
  let deleted = 0;
  for (;;) {
    const { runs, blobKeys } = await options.lifecycle.deleteEnded(cutoff, batch);
    deleted += runs;
    for (const key of blobKeys)
      await options.blobs
        .delete(key)
        .catch((error) => options.log.warn({ err: error, key }, 'retention could not delete an artifact blob'));
    if (runs < batch) break;
    await new Promise((resolve) => setTimeout(resolve, options.pauseMs ?? PAUSE_MS));
  }
  if (deleted > 0) await options.afterDeleting?.();
  return deleted;
}

/** HANGAR_RUN_RETENTION_DAYS as a loop: a pass every `intervalMs` (idempotent, so every engine process may run it). */
export function runRetention(options: Parameters<typeof deleteExpiredRuns>[0] & { intervalMs?: number }): PollingLoop {
  return new PollingLoop({
    intervalMs: options.intervalMs ?? 10 * 60_000,
    pass: async () => {
      const deleted = await deleteExpiredRuns(options);
      if (deleted > 0) options.log.info({ deleted, days: options.days }, 'run retention deleted ended runs');
    },
    onError: (error) => options.log.warn({ err: error }, 'run retention pass failed'),
  });
}
