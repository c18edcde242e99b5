import type { HarnessRunResult } from './harness-run.js';
import type { Outcome } from './store.js';

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
  if (final?.type === 'done') {
    return {
      state: 'SUCCEEDED',
      eventType: 'oz_run_done',
      statusMessage: final.summary ? { message: final.summary } : null,
      usage,
      eventPayload: payload,
    };
  }
  if (final?.type === 'ask_user') {
    return {
      state: 'BLOCKED',
      eventType: 'oz_run_blocked',
      statusMessage: { message: final.question },
      usage,
      eventPayload: payload,
    };
  }
  if (final?.type === 'failed') {
    const statusMessage = { message: final.message, ...(final.error_code ? { error_code: final.error_code } : {}) };
    return { state: 'FAILED', eventType: 'oz_run_failed', statusMessage, usage, eventPayload: payload };
  }
  if (exit.timedOut) {
    return {
      state: 'FAILED',
      eventType: 'oz_run_failed',
      statusMessage: {
        message: `The harness ${harness} ran past its time limit and was stopped`,
        error_code: 'budget_exceeded',
        retryable: false,
      },
      usage,
      eventPayload: { ...payload, timed_out: true },
    };
  }
  if (exit.code === 0)
    return { state: 'SUCCEEDED', eventType: 'oz_run_done', statusMessage: null, usage, eventPayload: payload };
  const how = exit.code === null ? `was killed by ${exit.signal ?? 'a signal'}` : `exited with code ${exit.code}`;
  const lastWords = diagnostics.findLast((line) => line.trim() !== '');
  const message = `The harness ${harness} ${how}${lastWords ? `: ${lastWords.trim().slice(0, 500)}` : ''}`;
  return { state: 'FAILED', eventType: 'oz_run_failed', statusMessage: { message }, usage, eventPayload: payload };
}
