import { AsyncLocalStorage } from 'node:async_hooks';
import { traceFields } from './tracing.js';

/** Fields every log line written inside a piece of work carries (a run's execution: its run_id). */
const fields = new AsyncLocalStorage<Record<string, string>>();

/** Runs `work` so that every line logged inside it, however deep, carries `extra` too. */
export function withLogFields<T>(extra: Record<string, string>, work: () => T): T {
  return fields.run({ ...fields.getStore(), ...extra }, work);
}

/**
 * pino's mixin: the fields of the work in progress, and the active span's `trace_id` and `span_id` when tracing
 * is on, so that a line about a run leads to the run and to its trace.
 */
export function logContext(): Record<string, string> {
  return { ...fields.getStore(), ...traceFields() };
}
