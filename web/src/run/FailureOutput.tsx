// The output of the command a failed run ended on.
import type { ExplainedRun, FailureOutput, TimelineEvent } from '../api/types';
import { eventLabel } from '../words';

const FAILED_STATES = ['FAILED', 'ERROR', 'BLOCKED'];
const TAIL_LINES = 20;

/**
 * The API's failure_output, else (from servers without it) the tail the last failed setup step or harness left on
 * the timeline.
 */
export function failureOutputOf(run: ExplainedRun, events: TimelineEvent[]): FailureOutput | undefined {
  if (!FAILED_STATES.includes(run.state)) return undefined;
  if (run.failure_output && run.failure_output.lines.length > 0) return run.failure_output;
  for (const event of [...events].reverse()) {
    const payload = (event.payload ?? {}) as Record<string, unknown>;
    const tail = payload.output_tail ?? payload.stderr_tail;
    if (typeof tail !== 'string' || tail.trim() === '') continue;
    const command =
      typeof payload.command === 'string'
        ? payload.command
        : typeof payload.repo === 'string'
          ? `git clone ${payload.repo}`
          : typeof payload.harness === 'string'
            ? `the ${payload.harness} harness`
            : eventLabel(event.event_type);
    return { command, lines: tail.split('\n').slice(-TAIL_LINES) };
  }
  return undefined;
}

export function FailureOutputView({ output }: { output: FailureOutput }) {
  return (
    <div className="failure-output">
      <p className="small">
        Last {output.lines.length === 1 ? 'line' : `${output.lines.length} lines`} of <code>{output.command}</code>:
      </p>
      <pre className="output" role="region" aria-label="Failure output" tabIndex={0}>
        {output.lines.join('\n')}
      </pre>
    </div>
  );
}
