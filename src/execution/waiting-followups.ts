import type { Kysely } from 'kysely';
import type { DB } from '../database.js';
import { Batcher } from '../platform/db/batcher.js';
import type { FollowupInput } from '../runs/index.js';
import * as store from './store.js';

/**
 * What every agent start reads before its harness exists (the follow-ups it is started with), coalesced across the
 * engine's run starts into one statement, as the start's own write is (EngineWrites): one read per batch of starts
 * rather than per run.
 */
export class WaitingFollowups {
  private readonly reads: Batcher<string, FollowupInput[]>;

  constructor(db: Kysely<DB>) {
    this.reads = new Batcher({ maxBatch: 100, maxInFlight: 2, write: (runIds) => store.waitingFollowups(db, runIds) });
  }

  of(runId: string): Promise<FollowupInput[]> {
    return this.reads.submit(runId);
  }
}
