import type { Redactor } from '../../../platform/redaction/redactor.js';
import type { ClaimedRun, Outcome, TranscriptRow } from '../../../runs/index.js';
import type { ExecutionContext } from '../context.js';
import type { RunRecord } from '../record.js';

/** Why an execution was stopped from outside: the reason of its AbortSignal. */
export type StopReason = 'cancelled' | 'lost' | 'shutdown';

/** The reason `signal` was stopped with (see Execution.stop); undefined while it runs on. */
export function stopReason(signal: AbortSignal): StopReason | undefined {
  return signal.aborted ? (signal.reason as StopReason) : undefined;
}

/** What every phase of one execution works with. Phases read it; none reports through it. */
export interface RunScope {
  /** The execution's context, its ledger redacted of the run's secret values. */
  context: ExecutionContext;
  run: ClaimedRun;
  /** The run's secret values: a phase adds those it learns (registry passwords, a built-in harness's keys). */
  redactor: Redactor;
  /** What the execution writes through its ledger. */
  record: RunRecord;
  /** Aborted when the execution is stopped (a cancel, a lost lease, a shutdown); its reason says which. */
  signal: AbortSignal;
  /** Whether a workspace kept after a failed setup is taken (the engine's debug sessions); a worker keeps none. */
  retainsWorkspaces: boolean;
}

/** A workspace kept after a failed setup, handed to the debug sessions when the run has ended. */
export interface RetainedWorkspace {
  runId: string;
  /** The execution that failed its setup; debug turns take the next numbers. */
  executionId: number;
  teamUid: string;
  workspace: string;
  until: Date;
  retentionMinutes: number;
  harness: string | undefined;
  prompt: string;
  failure: string;
  agentConfig: Record<string, unknown>;
  conversationId: string;
}

/**
 * How an execution ends before its last phase: with an outcome to record, or with none (null: it was stopped, or
 * the run is no longer its, or it has ended already).
 */
export interface Ended {
  outcome: Outcome | null;
  /** The setup failed and its workspace is kept for a debug window: the run has ended, the workspace stays. */
  retained?: RetainedWorkspace;
  /** The harness's last transcript lines, written with the end. */
  transcriptTail?: TranscriptRow[];
}

/** What a phase returns: what it produced for the next, or how the execution ends. */
export type Phase<T> = { continue: T } | Ended;

/** The execution ends with nothing to record. */
export const NOTHING: Ended = { outcome: null };

export function ends<T>(result: Phase<T>): result is Ended {
  return !('continue' in result);
}
