import { isDatabaseUnavailable } from '../../../platform/db/sql-state.js';
import type { Outcome, TimelineEvent, TranscriptRow } from '../../../runs/index.js';
import { HarnessStartError } from '../../harnesses/harness.js';
import { WorkspacePathError } from '../../workspace/files.js';
import { failed } from '../outcomes.js';
import { type RunScope, stopReason } from './types.js';

/** How the phases left the execution, for its end. */
export interface Settling {
  outcome: Outcome | null;
  /** The database was unavailable before anything of the agent ran: the run goes back to the queue. */
  unavailableBeforeAgent: boolean;
  /**
   * From just before its harness is spawned: the agent may have run, so this execution is never put back in the
   * queue (it would run a second time); it ends instead.
   */
  agentMayHaveRun: boolean;
  /** The agent's start is recorded (its harness process exists). */
  agentStarted: boolean;
  /** The harness's last transcript lines, written with the end (one write less per run). */
  transcriptTail: TranscriptRow[];
}

/**
 * How a phase that threw ends the execution: nothing when it was stopped meanwhile; a blip of the database before
 * the agent did no work of the run's, which is queued again; after, the agent may have acted, and the run ends.
 */
export function errorEnding(
  { context, run, signal }: RunScope,
  error: unknown,
  agentMayHaveRun: boolean,
): Pick<Settling, 'outcome' | 'unavailableBeforeAgent'> {
  const none = { outcome: null, unavailableBeforeAgent: false };
  if (signal.aborted) return none;
  if (error instanceof HarnessStartError) return { ...none, outcome: failed({ kind: 'start_refused', error }) };
  // The run's own setup put a link (or something else) where the server writes its files: refused, never followed.
  if (error instanceof WorkspacePathError)
    return { ...none, outcome: failed({ kind: 'workspace_refused', message: error.message }) };
  if (isDatabaseUnavailable(error)) {
    context.log.warn({ err: error, runId: run.id }, 'the database was unavailable during the execution');
    if (!agentMayHaveRun) return { outcome: null, unavailableBeforeAgent: true };
    return { ...none, outcome: failed({ kind: 'database_unavailable' }) };
  }
  context.log.error({ err: error, runId: run.id }, 'execution failed');
  return { ...none, outcome: failed({ kind: 'internal' }) };
}

/**
 * Records the end: the outcome, or what a cancel, a lost lease or a shutdown leaves to do (the stop is read now: one
 * that came while the sandbox was cleaned up counts). `before` are the events of the sandbox going away, written
 * with the outcome when there is one.
 */
export async function settle(scope: RunScope, settling: Settling, before: TimelineEvent[]): Promise<void> {
  const { context, run, record } = scope;
  const reason = stopReason(scope.signal);
  const { outcome, agentMayHaveRun, agentStarted } = settling;
  if (outcome && reason === undefined) {
    await record.finish(outcome, before, settling.transcriptTail);
    return;
  }
  const tail = settling.transcriptTail;
  if (tail.length > 0)
    await context.ledger
      .transcript(tail)
      .catch((error) => context.log.error({ err: error, runId: run.id }, 'could not write the transcript'));
  if (before.length > 0) await context.ledger.events(run.id, run.execution_id, before).catch(() => undefined);
  const requeueBecause =
    reason === 'shutdown'
      ? 'the executor shut down before the agent started'
      : settling.unavailableBeforeAgent
        ? 'the database was unavailable before the agent started'
        : undefined;
  if (requeueBecause && !agentMayHaveRun && !agentStarted) {
    await context.ledger.requeue(run.id, run.execution_id, requeueBecause);
  } else if (reason === 'shutdown') {
    await record.finish(failed({ kind: 'shutdown' }), [], []);
  } else if (reason !== undefined) {
    if (agentStarted) await context.ledger.clearSandboxIfCancelled(run.id, run.execution_id);
    if (reason === 'cancelled') record.logEnd('CANCELLED', undefined);
  }
}
