import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { DB } from '../database.js';
import { PollingLoop } from '../platform/loop.js';
import { foldAllOverviewChanges } from './lifecycle/overview-rollup.js';

/** The overview's background fold (see foldAllOverviewChanges), every few minutes on the engine processes. */
export function overviewFold(db: Kysely<DB>, log: FastifyBaseLogger, intervalMs = 5 * 60_000): PollingLoop {
  return new PollingLoop({
    intervalMs,
    waitFirst: true,
    pass: async () => {
      const folded = await foldAllOverviewChanges(db);
      if (folded > 0) log.debug({ folded }, 'overview changes folded');
    },
    onError: (error) => log.warn({ err: error }, 'overview fold pass failed'),
  });
}
