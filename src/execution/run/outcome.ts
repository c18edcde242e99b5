import { unreachable, type Outcome } from '../../runs/index.js';
import type { FinalEvent, HarnessRunResult } from './harness-run.js';
import { failureReason } from './output-tail.js';

/**
 * How an execution ends, from what the harness said last and how its process exited. A final event wins (the
 * harness knows best); without one, exit 0 is success and anything else a failure naming the exit code.
 */
export function outcomeOf(result: HarnessRunResult, harness: string): Outcome {
  const { exit, final, usage, diagnostics } = result;
  const payload = {
    harness,
    exit_code: exit.code,
    ...(exit.signal ? { signal: exit.signal } : {}),
    ...(exit.outputTruncated ? { output_truncated: true } : {}),
    ...(diagnostics.length > 0 && exit.code !== 0 ? { stderr_tail: diagnostics.join('\n') } : {}),
  };
  if (final) return { ...finalOutcome(final), usage, eventPayload: payload };
  if (exit.limitExceeded) {
    return {
      state: 'FAILED',
      statusMessage: {
        message: `The harness ${harness} ${exit.limitExceeded} and was stopped`,
        // The container's memory or process limit (not spend or time, which are budget_exceeded).
        error_code: 'resource_limit_exceeded',
        retryable: false,
      },
      usage,
      eventPayload: { ...payload, limit_exceeded: exit.limitExceeded },
    };
  }
  if (exit.timedOut) {
    return {
      state: 'FAILED',
      statusMessage: {
        message: `The harness ${harness} ran past its time limit and was stopped`,
        error_code: 'budget_exceeded',
        retryable: false,
      },
      usage,
      eventPayload: { ...payload, timed_out: true },
    };
  }
  if (exit.code === 0) return { state: 'SUCCEEDED', statusMessage: null, usage, eventPayload: payload };
  const how = exit.code === null ? `was killed by ${exit.signal ?? 'a signal'}` : `exited with code ${exit.code}`;
  // The error itself (`Error: Cannot find module ...`), not node's closing `Node.js v20` line.
  const reason = failureReason(diagnostics);
  const message = `The harness ${harness} ${how}${reason ? `: ${reason.slice(0, 500)}` : ''}`;
  return { state: 'FAILED', statusMessage: { message }, usage, eventPayload: payload };
}

/** The run state each final event of the harness protocol ends in: a new kind of final event must be mapped here. */
function finalOutcome(final: FinalEvent): Pick<Outcome, 'state' | 'statusMessage'> {
  switch (final.type) {
    case 'done':
      return { state: 'SUCCEEDED', statusMessage: final.summary ? { message: final.summary } : null };
    case 'ask_user':
      return { state: 'BLOCKED', statusMessage: { message: final.question } };
    case 'failed':
      return {
        state: 'FAILED',
        statusMessage: { message: final.message, ...(final.error_code ? { error_code: final.error_code } : {}) },
      };
    default:
      return unreachable(final);
  }
}
