import type { MoveSignal, RunState, TransitionName } from './states.js';

/**
 * Typed lifecycle events in process: RunLifecycle, the one writer of run state, sends one for each run it created
 * or moved, once the write has committed (a move inside a transaction it opened, when that commits; a move inside a
 * caller's transaction is not sent, and creations are sent by countCreated, which callers call after their commit).
 * Listeners learn that a run changed, never more than the database says: they read the run for its state. Moves
 * made by other processes on the same database are not seen here (the bus's NOTIFY carries those).
 */
export type RunSignalType = 'run:created' | MoveSignal;

export interface RunSignal {
  type: RunSignalType;
  runId: string;
  /** The state the run reached. */
  state: RunState;
  /** The move that got it there; absent for a creation. */
  transition?: TransitionName;
}

export type RunSignalListener = (signal: RunSignal) => void;

/**
 * One per process, like the metrics registry: every server in the process sends here, so a listener (the tests'
 * waits) sees the runs of each of them.
 */
class RunSignals {
  private readonly listeners = new Set<RunSignalListener>();

  /** Calls `listener` for each signal from now on; returns the call that stops it. */
  on(listener: RunSignalListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit(signals: readonly RunSignal[]): void {
    if (signals.length === 0 || this.listeners.size === 0) return;
    for (const signal of signals)
      for (const listener of this.listeners) {
        try {
          listener(signal);
        } catch {
          // A listener's failure is its own: the write it follows has committed all the same.
        }
      }
  }
}

export const runSignals = new RunSignals();
