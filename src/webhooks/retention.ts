import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { DB } from '../database.js';
import { PollingLoop } from '../platform/loop.js';
import { pruneRateWindows } from './limits.js';
import { pruneDeliveries, pruneReplayKeys } from './store.js';

/** What the interface promises the delivery log keeps, per webhook. */
export const KEEP_LATEST_DELIVERIES = 50;
export const KEEP_DELIVERY_DAYS = 7;

/**
 * Trims delivery logs to the retention promise and drops rate counters no check reads and the replay keys of
 * timestamped schemes past their keeping time. Idempotent deletes, so every engine process may run it.
 */
export function webhookRetention(db: Kysely<DB>, log: FastifyBaseLogger, intervalMs = 5 * 60_000): PollingLoop {
  return new PollingLoop({
    intervalMs,
    waitFirst: true,
    pass: async () => {
      await Promise.all([
        pruneDeliveries(db, KEEP_LATEST_DELIVERIES, KEEP_DELIVERY_DAYS),
        pruneRateWindows(db),
        pruneReplayKeys(db),
      ]);
    },
    onError: (error) => log.warn({ err: error }, 'webhook retention pass failed'),
  });
}
