import { Batcher } from '../../platform/db/batcher.js';
import { retryWhileUnavailable } from '../../platform/db/retry-unavailable.js';
import type {
  EventRow,
  Finish,
  FinishResult,
  FollowupInput,
  RunLifecycle,
  TimelineEvent,
  TranscriptRow,
  Transition,
  TransitionResult,
} from '../../runs/index.js';
import { AgentStarts } from '../run/agent-starts.js';

export interface EngineWritesOptions {
  /**
   * How long a write is tried again while the database is unavailable (a restart, a failover, dropped
   * connections): at least the run lease, so that a blip the lease survives loses nothing the agent did.
   */
  retryForMs: number;
  /** Told once per write that has to wait for the database. */
  onRetry?: (error: unknown) => void;
}

/**
 * The writes every execution makes on its way (transitions, timeline events, transcript lines, the agent's start
 * intent, the end), each
 * coalesced with the same writes of the engine's other executions into one statement. With many runs in
 * flight this turns several commits per run into a few per batch; alone, a write goes out at once.
 *
 * Each write is submitted again, with backoff, while the database is unavailable. That is safe because every
 * write stays conditional on the run still being this execution's (the lease owner and the execution, checked by
 * the lifecycle in the statement itself): a run taken back meanwhile refuses the late write.
 */
export class EngineWrites {
  private readonly transitions: Batcher<Transition, TransitionResult>;
  private readonly eventGroups: Batcher<EventRow[], void>;
  private readonly transcripts: Batcher<TranscriptRow[], void>;
  private readonly finishes: Batcher<Finish, FinishResult>;
  private readonly agentStarts: AgentStarts;

  constructor(
    lifecycle: RunLifecycle,
    engineId: string,
    private readonly retry: EngineWritesOptions,
  ) {
    // Two batches of a kind in flight at most: one being written while the next gathers.
    // Outside traces: a batch holds many runs' writes, so its statements belong to no one run's trace.
    const options = { maxBatch: 100, maxInFlight: 2, outsideTraces: true };
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
    this.agentStarts = new AgentStarts(lifecycle, engineId);
  }

  transition(transition: Transition): Promise<TransitionResult> {
    return this.retrying(() => this.transitions.submit(transition));
  }

  /** Appends a run's events in order (one item, so a batch boundary can never split and reorder them). */
  events(runId: string, executionId: number, events: TimelineEvent[]): Promise<void> {
    const rows = events.map((event) => ({ runId, executionId, event }));
    return this.retrying(() => this.eventGroups.submit(rows));
  }

  transcript(rows: TranscriptRow[]): Promise<void> {
    return this.retrying(() => this.transcripts.submit(rows));
  }

  /**
   * The intent to start an agent, with the follow-ups it starts with (agent-starts.ts). Not tried again: a database
   * blip before the agent requeues the run, as every failure before the intent does.
   */
  beginAgentStart(runId: string, executionId: number): Promise<FollowupInput[]> {
    return this.agentStarts.begin(runId, executionId);
  }

  finish(finish: Finish): Promise<FinishResult> {
    return this.retrying(() => this.finishes.submit(finish));
  }

  /**
   * Each item is submitted again on its own schedule rather than the batch retried as a whole: an item's wait
   * starts when it was submitted, and the items waiting at the same time still coalesce when they go out again.
   */
  retrying<T>(submit: () => Promise<T>): Promise<T> {
    let told = false;
    return retryWhileUnavailable(submit, {
      forMs: this.retry.retryForMs,
      onRetry: (error) => {
        if (told) return;
        told = true;
        this.retry.onRetry?.(error);
      },
    });
  }
}

/** The same result for every item of a batch that returns nothing per item. */
function each<T>(items: unknown[], value: T): T[] {
  return items.map(() => value);
}
