import type { Kysely } from 'kysely';
import { Batcher } from '../platform/db/batcher.js';
import type { DB } from '../database.js';
import * as store from './store.js';

/**
 * The writes every execution makes on its way (transitions, timeline events, transcript lines, the end), each
 * coalesced with the same writes of the engine's other executions into one statement. With many runs in
 * flight this turns several commits per run into a few per batch; alone, a write goes out at once.
 */
export class EngineWrites {
  private readonly transitions: Batcher<store.Transition, store.TransitionResult>;
  private readonly eventGroups: Batcher<store.EventRow[], void>;
  private readonly transcripts: Batcher<store.TranscriptRow[], void>;
  private readonly finishes: Batcher<store.Finish, store.FinishResult>;

  constructor(
    readonly db: Kysely<DB>,
    engineId: string,
  ) {
    // Two batches of a kind in flight at most: one being written while the next gathers.
    const options = { maxBatch: 100, maxInFlight: 2 };
    this.transitions = new Batcher({ ...options, write: (items) => store.applyTransitions(db, engineId, items) });
    this.eventGroups = new Batcher({
      ...options,
      write: async (groups) => each(groups, await store.insertEvents(db, groups.flat())),
    });
    this.transcripts = new Batcher({
      ...options,
      write: async (chunks) => each(chunks, await store.appendTranscript(db, chunks.flat())),
    });
    this.finishes = new Batcher({ ...options, write: (items) => store.finishExecutions(db, engineId, items) });
  }

  transition(transition: store.Transition): Promise<store.TransitionResult> {
    return this.transitions.submit(transition);
  }

  /** Appends a run's events in order (one item, so a batch boundary can never split and reorder them). */
  events(runId: string, executionId: number, events: store.TimelineEvent[]): Promise<void> {
    return this.eventGroups.submit(events.map((event) => ({ runId, executionId, event })));
  }

  transcript(rows: store.TranscriptRow[]): Promise<void> {
    return this.transcripts.submit(rows);
  }

  finish(finish: store.Finish): Promise<store.FinishResult> {
    return this.finishes.submit(finish);
  }
}

/** The same result for every item of a batch that returns nothing per item. */
function each<T>(items: unknown[], value: T): T[] {
  return items.map(() => value);
}
