import type { Redactor } from './redactor.js';

/**
 * The redactors of the executions running in this process, by run and execution: the harness-support routes
 * (a harness reporting artifacts and progress over HTTP) take theirs from here, and every log line the process
 * writes is redacted with all of them. An execution registers its redactor while it runs and removes it at its end.
 */
const active = new Map<string, Redactor>();

const keyOf = (runId: string, executionId: number) => `${runId}/${executionId}`;

/** Registers an execution's redactor; the function returned removes it. */
export function activateRedactor(runId: string, executionId: number, redactor: Redactor): () => void {
  const key = keyOf(runId, executionId);
  active.set(key, redactor);
  return () => {
    if (active.get(key) === redactor) active.delete(key);
  };
}

/** The redactor of an execution running in this process, if it is one. */
export function activeRedactor(runId: string, executionId: number): Redactor | undefined {
  return active.get(keyOf(runId, executionId));
}

/** Values redacted from every log line whatever runs: the operator's provider keys. */
let standing: Redactor | undefined;

/** Sets the values every log line is redacted of, running executions or not (the operator's provider keys). */
export function setStandingRedactor(redactor: Redactor | undefined): void {
  standing = redactor;
}

/** A log line with the operator's keys and the values of every execution running in this process replaced. */
export function redactActiveValues(line: string): string {
  let redacted = standing ? standing.text(line) : line;
  for (const redactor of active.values()) redacted = redactor.text(redacted);
  return redacted;
}
