import { Batcher } from '../platform/db/batcher.js';
import type {
  EventRow,
  Finish,
  FinishResult,
  RunLifecycle,
  TimelineEvent,
  Transition,
  TransitionResult,
  TranscriptRow,
} from '../runs/index.js';

/**
 * The writes every execution makes on its way (transitions, timeline events, transcript lines, the end), each
 * coalesced with the same writes of the engine's other executions into one statement. With many runs in
 * flight this turns several commits per run into a few per batch; alone, a write goes out at once.
 */
export class EngineWrites {
  private readonly transitions: Batcher<Transition, TransitionResult>;
  private readonly eventGroups: Batcher<EventRow[], void>;
  private readonly transcripts: Batcher<TranscriptRow[], void>;
  private readonly finishes: Batcher<Finish, FinishResult>;

  constructor(lifecycle: RunLifecycle, engineId: string) {
    // Two batches of a kind in flight at most: one being written while the next gathers.
    const options = { maxBatch: 100, maxInFlight: 2 };
    this.transitions = new Batcher({ ...options, write: (items) => lifecycle.transition(engineId, items) });
    this.eventGroups = new Batcher({
      ...options,
      write: async (groups) => each(groups, await lifecycle.events(groups.flat())),
    });
    this.transcripts = new Batcher({
      ...options,
      write: async (chunks) => each(chunks, await lifecycle.transcript(chunks.flat())),
    });
    this.finishes = new Batcher({ ...options, write: (items) => lifecycle.finish(engineId, items) });
  }

  transition(transition: Transition): Promise<TransitionResult> {
    return this.transitions.submit(transition);
  }

  /** Appends a run's events in order (one item, so a batch boundary can never split and reorder them). */
  events(runId: string, executionId: number, events: TimelineEvent[]): Promise<void> {
    return this.eventGroups.submit(events.map((event) => ({ runId, executionId, event })));
  }

  transcript(rows: TranscriptRow[]): Promise<void> {
    return this.transcripts.submit(rows);
  }

  finish(finish: Finish): Promise<FinishResult> {
    return this.finishes.submit(finish);
  }
}

/** The same result for every item of a batch that returns nothing per item. */
function each<T>(items: unknown[], value: T): T[] {
  return items.map(() => value);
}
