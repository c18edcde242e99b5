import type { EnvironmentConfig } from '../../environments/index.js';
import type { SetupResult } from '../workspace/workspace.js';

// What a warm start is asked (PrepareRequest) and what it answers (PreparedEnvironment): warm-start.ts's, and its parts'.

/** How an execution's environment was prepared: from nothing, from a matching snapshot, or from an older one. */
export type StartPath = 'cold' | 'warm' | 'updated';

export interface PreparedEnvironment {
  result: SetupResult;
  path: StartPath;
  /** Milliseconds per step: fetch (the mirrors), clone, restore, update, setup, snapshot. */
  steps: Record<string, number>;
  /** The start of the snapshot key it started from or made. */
  snapshotKey?: string;
}

export type Report = (type: string, payload: Record<string, unknown>) => Promise<void>;

export interface PrepareRequest {
  workspace: string;
  runId: string;
  executionId: number;
  environmentUid: string;
  teamUid: string;
  environment: EnvironmentConfig;
  /** False when the workspace holds what only this run may see (its attachments): it is then never snapshotted. */
  mayTakeSnapshot: boolean;
  report: Report;
  abort: AbortSignal;
  /**
   * The execution's container (container sandbox), opened here once the path is known: from the snapshot's image on
   * a warm or updated start, else from the environment's. `open` is false when it could not be (the outcome set).
   */
  sandbox?: {
    open: (snapshotImage?: string) => Promise<boolean>;
    close: () => Promise<void>;
    /** Freezes and detaches the container, which goes once the next one is open (or at close). */
    retire: () => Promise<void>;
  };
}
