import { withLogFields } from '../../platform/log-context.js';
import { activateRedactor } from '../../platform/redaction/active.js';
import { contextOf, endSpan, type Span, startSpan, withSpan } from '../../platform/tracing.js';
import type { ClaimedRun, Outcome } from '../../runs/index.js';
import { operatorRedactor, redactedContext } from '../redaction/index.js';
import { workspaceName } from '../workspace/workspace.js';
import type { ExecutionContext } from './context.js';
import { FollowupDelivery } from './followups.js';
import { type RetainedWorkspace, type StopReason, stopReason } from './phases/types.js';
import { RunRecord } from './record.js';
import { runExecution } from './runner.js';

export type { RetainedWorkspace } from './phases/types.js';

/**
 * One execution of a claimed run, from PENDING to its end (runExecution: workspace, environment setup, harness,
 * outcome). A cancel (or a lost lease) stops whatever phase is in progress; the run's state is then someone else's
 * to set.
 */
export class Execution {
  /** Aborted, with its StopReason, when the execution is stopped: every phase sees it. */
  private readonly abort = new AbortController();
  private readonly followups: FollowupDelivery;
  readonly done: Promise<void>;
  /** The execution's span (tracing on): a child of what created the run, the parent of claim, setup, agent, end. */
  private readonly span: Span | undefined;

  constructor(
    context: ExecutionContext,
    private readonly run: ClaimedRun,
    /** Takes a workspace kept after a failed setup; without it (a worker), no workspace is kept. */
    onRetained?: (retained: RetainedWorkspace) => void,
    /** When the engine's claim of this run started (its claim span); a worker's claim happens here. */
    claimStarted?: Date,
  ) {
    // The run's secret values (the operator's keys, and what a built-in harness is given), kept out of all it writes.
    const redactor = operatorRedactor(context);
    const redacted = redactedContext(context, redactor);
    const record = new RunRecord(redacted.ledger, run, redacted.log);
    const { signal } = this.abort;
    this.followups = new FollowupDelivery(redacted.ledger, run.id, run.execution_id, signal, redacted.log);
    this.span = startSpan('run', {
      parent: contextOf(run.trace_parent),
      attributes: { 'hangar.run_id': run.id, 'hangar.team': run.team_uid, 'hangar.execution_id': run.execution_id },
    });
    if (claimStarted) endSpan(withSpan(this.span, () => startSpan('claim', { startTime: claimStarted })));
    // Log lines written while the execution runs are redacted of its values too, whoever writes them.
    const deactivate = activateRedactor(run.id, run.execution_id, redactor);
    const scope = { context: redacted, run, redactor, record, signal, retainsWorkspaces: onRetained !== undefined };
    let outcome: Outcome | null = null;
    // Every line logged about this execution carries its run_id (and, tracing on, its trace_id).
    this.done = withLogFields({ run_id: run.id }, () =>
      withSpan(this.span, async () => {
        try {
          outcome = await runExecution(scope, this.followups, onRetained, this.span);
        } catch (error) {
          context.log.error({ err: error, runId: run.id }, 'execution failed unexpectedly');
        }
      }),
    ).finally(() => {
      deactivate();
      this.span?.setAttribute('hangar.state', outcome?.state ?? stopReason(signal) ?? 'none');
      endSpan(this.span);
    });
  }

  get runId(): string {
    return this.run.id;
  }

  /** The name of its workspace under the workspace root. */
  get workspaceName(): string {
    return workspaceName(this.run.id, this.run.execution_id);
  }

  /** Stops the execution: its run was cancelled, taken back, or this engine is shutting down. */
  stop(reason: StopReason): void {
    if (this.abort.signal.aborted) return;
    this.abort.abort(reason);
  }

  /** Gives follow-ups that arrived while the agent runs to it, when the harness accepts input (FollowupDelivery). */
  deliverFollowups(): Promise<void> {
    return this.followups.deliver();
  }
}
