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
    // Outside traces like the engine's writes: a batch serves many runs, so it belongs to none of their traces.
    this.reads = new Batcher({
      maxBatch: 100,
      maxInFlight: 2,
      outsideTraces: true,
      write: (runIds) => store.waitingFollowups(db, runIds),
    });
  }

  of(runId: string): Promise<FollowupInput[]> {
    return this.reads.submit(runId);
  }
}
