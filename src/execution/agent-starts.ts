import { Batcher } from '../platform/db/batcher.js';
import type { RunLifecycle } from '../runs/index.js';

/**
 * The intent to start an agent, recorded right before its harness is spawned (a takeback then ends the run ERROR
 * rather than running it again, see runs/lifecycle/start-intents.ts). Coalesced across the engine's run starts into
 * one statement, as the start's own write is (EngineWrites).
 */
export class AgentStarts {
  private readonly intents: Batcher<{ runId: string; executionId: number }, void>;

  constructor(lifecycle: RunLifecycle, engineId: string) {
    // Outside traces like the engine's writes: a batch serves many runs, so it belongs to none of their traces.
    this.intents = new Batcher({
      maxBatch: 100,
      maxInFlight: 2,
      outsideTraces: true,
      write: async (starts) => {
        await lifecycle.markAgentStarts(engineId, starts);
        return starts.map(() => undefined);
      },
    });
  }

  intend(runId: string, executionId: number): Promise<void> {
    return this.intents.submit({ runId, executionId });
  }
}
