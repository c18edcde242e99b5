import type { Kysely } from 'kysely';
import type { DB } from '../database.js';

/**
 * What the failing command of a FAILED or ERROR run printed (issue 26), next to its error: the setup command's or
 * clone's output, or the harness's stderr, as the timeline events of the run's last execution recorded them
 * (`environment_setup_step_failed`'s output_tail, the end event's stderr_tail; src/execution/run/output-tail.ts chose
 * the lines).
 */
export interface FailureOutput {
  /** The setup command, `git clone owner/repo`, or `harness <name>`. */
  command: string;
  lines: string[];
}

const FAILURE_EVENTS = ['environment_setup_step_failed', 'oz_run_failed', 'oz_run_errored'] as const;

export function isFailedState(state: string): boolean {
  return state === 'FAILED' || state === 'ERROR';
}

export async function failureOutput(db: Kysely<DB>, runId: string): Promise<FailureOutput | undefined> {
  // The last few suffice: an execution ends with at most one failed setup step and one end event.
  const events = await db
    .selectFrom('run_events')
    .select(['execution_id', 'event_type', 'payload'])
    .where('run_id', '=', runId)
    .where('event_type', 'in', FAILURE_EVENTS)
    .orderBy('seq', 'desc')
    .limit(3)
    .execute();
  return failureOutputOf(events);
}

/** From the failure events of a run, newest first: the output of the last execution's failing command. */
export function failureOutputOf(
  events: Array<{ execution_id: string | null; event_type: string; payload: Record<string, unknown> | null }>,
): FailureOutput | undefined {
  const [end] = events;
  if (!end) return undefined;
  const text = (value: unknown) => (typeof value === 'string' && value.trim() !== '' ? value : undefined);
  if (end.event_type !== 'environment_setup_step_failed') {
    const stderr = text(end.payload?.stderr_tail);
    if (stderr) return { command: `harness ${String(end.payload?.harness ?? '')}`.trim(), lines: stderr.split('\n') };
  }
  const step = events.find(
    (event) => event.event_type === 'environment_setup_step_failed' && event.execution_id === end.execution_id,
  );
  if (!step) return undefined;
  const output = text(step.payload?.output_tail);
  const command = text(step.payload?.command) ?? (step.payload?.repo ? `git clone ${String(step.payload.repo)}` : '');
  if (!output || !command) return undefined;
  return { command, lines: output.split('\n') };
}
