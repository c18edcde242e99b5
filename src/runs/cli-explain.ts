import type { RunItem } from './schemas.js';

/** What `--follow` says about a run that waits (issue 26): the server's reason, in its words. */
export function waitingLine(run: Pick<RunItem, 'queue_reason'>): string | undefined {
  return run.queue_reason ? `waiting: ${run.queue_reason.message}\n` : undefined;
}

/** The failing command's output under a failed run's error line, indented so it reads as the command's own. */
export function failureBlock(run: Pick<RunItem, 'failure_output'>): string | undefined {
  const output = run.failure_output;
  if (!output || output.lines.length === 0) return undefined;
  return `output of ${output.command}:\n${output.lines.map((line) => `  | ${line}`).join('\n')}\n`;
}
