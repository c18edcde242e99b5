import type { FastifyBaseLogger } from 'fastify';
import type { BlobStore } from '../platform/blobs/store.js';
import { PollingLoop } from '../platform/loop.js';
import type { RunLifecycle } from './lifecycle/run-lifecycle.js';

/** The most runs deleted per statement: each batch is a short transaction, so lists and writes never wait long. */
export const RETENTION_BATCH = 200;
/** A timed pass's first batch, before it knows how long a run takes to delete here (its events, its rows). */
const FIRST_BATCH = 20;
/** A timed pass's smallest batch: below it, a batch's fixed cost (its transaction, the search) is all it does. */
const MIN_BATCH = 5;
/**
 * How long one batch should hold the database on PGlite. PGlite is one connection in this process: a batch holds
 * it (and the event loop) for its whole transaction, so an API request arriving meanwhile waits that long per query.
 * On PostgreSQL a batch locks only its own rows and the API's queries run beside it: batches are not timed there.
 */
export const PGLITE_BATCH_MS = 20;
/** The shortest pause between batches; a pause is also never shorter than the batch before it took. */
const PAUSE_MS = 25;

/**
 * The next batch's size: scaled so that a batch takes about `targetMs` (what a run costs to delete varies with its
 * events, transcript and artifacts), growing at most twofold a batch so one fast batch does not make the next
 * long, and between MIN_BATCH and `max`.
 */
export function nextBatchSize(size: number, tookMs: number, targetMs: number, max: number): number {
  const scaled = Math.floor((size * targetMs) / Math.max(tookMs, 0.1));
  return Math.max(Math.min(MIN_BATCH, max), Math.min(max, size * 2, scaled));
}

/**
 * One retention pass: deletes the runs ended more than `days` ago, a batch at a time until none is left, then
 * the bytes of their artifacts from the blob store. A blob that cannot be deleted is logged and left (an orphan
 * costs space, never access: its row is gone). With `targetBatchMs` (PGlite), batches are sized to take about that
 * long, and after each the pass pauses at least as long as the batch took: the deletes take at most half of the
 * database's time, and the API's queries are served in between instead of queueing behind long batches. Without
 * it (PostgreSQL), batches are of `batch` runs with a short pause. `afterDeleting` runs once something was deleted
 * (PGlite's VACUUM, table by table).
 */
export async function deleteExpiredRuns(options: {
  lifecycle: RunLifecycle;
  blobs: BlobStore;
  days: number;
  log: FastifyBaseLogger;
  now?: () => Date;
  /** The most runs per batch (RETENTION_BATCH). */
  batch?: number;
  /** What a batch should take (PGLITE_BATCH_MS on PGlite); absent: batches of `batch` runs. */
  targetBatchMs?: number;
  pauseMs?: number;
  afterDeleting?: () => Promise<void>;
  /** Awaited before each batch after the first: a quiet moment of the API (PGlite, see RequestActivity). */
  whenQuiet?: () => Promise<void>;
  /** Told of each batch (the benchmark's figures). */
  onBatch?: (batch: { runs: number; ms: number }) => void;
}): Promise<number> {
  const max = options.batch ?? RETENTION_BATCH;
  const targetMs = options.targetBatchMs;
  const cutoff = new Date((options.now?.() ?? new Date()).getTime() - options.days * 86_400_000);
  let size = targetMs === undefined ? max : Math.min(FIRST_BATCH, max);
  let deleted = 0;
  for (;;) {
    const started = performance.now();
    const { runs, blobKeys } = await options.lifecycle.deleteEnded(cutoff, size);
    const took = performance.now() - started;
    options.onBatch?.({ runs, ms: took });
    deleted += runs;
    for (const key of blobKeys)
      await options.blobs
        .delete(key)
        .catch((error) => options.log.warn({ err: error, key }, 'retention could not delete an artifact blob'));
    if (runs < size) break;
    const pauseMs = options.pauseMs ?? PAUSE_MS;
    if (targetMs === undefined) await new Promise((resolve) => setTimeout(resolve, pauseMs));
    else {
      size = nextBatchSize(size, took, targetMs, max);
      await new Promise((resolve) => setTimeout(resolve, Math.max(pauseMs, took)));
    }
    await options.whenQuiet?.();
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
