import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { DB } from '../database.js';
import { PollingLoop } from '../platform/loop.js';
import { pruneEntries } from './store.js';

/** Entries deleted per statement: short transactions, so the log's readers and writers never wait long. */
const BATCH = 1000;

/**
 * Deletes audit entries older than HANGAR_AUDIT_RETENTION_DAYS (separate from runs' retention), in batches until
 * none is left. Idempotent, so every engine process may run it.
 */
export function auditRetention(
  db: Kysely<DB>,
  log: FastifyBaseLogger,
  retentionDays: number,
  options: { intervalMs?: number; now?: () => Date } = {},
): PollingLoop {
  return new PollingLoop({
    intervalMs: options.intervalMs ?? 60 * 60_000,
    pass: async () => {
      const cutoff = new Date((options.now?.() ?? new Date()).getTime() - retentionDays * 86_400_000);
      while ((await pruneEntries(db, cutoff, BATCH)) === BATCH) {
        // Another batch: there may be more.
      }
    },
    onError: (error) => log.warn({ err: error }, 'audit retention pass failed'),
  });
}
