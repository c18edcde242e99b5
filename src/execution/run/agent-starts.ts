import { Batcher } from '../../platform/db/batcher.js';
import type { FollowupInput, RunLifecycle } from '../../runs/index.js';

/**
 * What every agent start does last before its harness is spawned: records the intent to start it (a takeback then
 * ends the run ERROR rather than running it again, see runs/lifecycle/start-intents.ts) and reads the follow-ups it
 * is started with. Coalesced across the engine's run starts into one statement, as the start's own write is
 * (EngineWrites).
 */
export class AgentStarts {
  private readonly starts: Batcher<{ runId: string; executionId: number }, FollowupInput[]>;

  constructor(lifecycle: RunLifecycle, engineId: string) {
    // Outside traces like the engine's writes: a batch serves many runs, so it belongs to none of their traces.
    this.starts = new Batcher({
      maxBatch: 100,
      maxInFlight: 2,
      outsideTraces: true,
      write: (starts) => lifecycle.beginAgentStarts(engineId, starts),
    });
  }

  begin(runId: string, executionId: number): Promise<FollowupInput[]> {
    return this.starts.submit({ runId, executionId });
  }
}
