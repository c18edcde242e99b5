import { createHash } from 'node:crypto';

/**
 * The labels every object of a run's execution carries: a server finds its Jobs again by them after a restart
 * (`hangar.dev/server`, one value per installation), and each object names its run and execution.
 */
export const LABEL = {
  server: 'hangar.dev/server',
  run: 'hangar.dev/run',
  execution: 'hangar.dev/execution',
  managedBy: 'app.kubernetes.io/managed-by',
} as const;

export function executionLabels(instance: string, runId: string, executionId: number): Record<string, string> {
  return {
    [LABEL.managedBy]: 'hangar',
    [LABEL.server]: instance,
    [LABEL.run]: labelValue(runId),
    [LABEL.execution]: String(executionId),
  };
}

/** The label selector of one installation's run objects. */
export function serverSelector(instance: string): string {
  return `${LABEL.server}=${instance}`;
}

/** A run ID as a label value: as it is when Kubernetes takes it, else a digest (63 characters at most). */
export function labelValue(value: string): string {
  if (/^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/.test(value)) return value;
  return `h-${createHash('sha256').update(value).digest('hex').slice(0, 40)}`;
}

/** The Job's name (a DNS label): `hangar-run-<run>-<execution>`, its run part lower-cased or a digest. */
export function jobName(runId: string, executionId: number): string {
  const suffix = `-${executionId}`;
  const clean = runId.toLowerCase().replace(/[^a-z0-9-]/g, '-');
  const room = 63 - 'hangar-run-'.length - suffix.length;
  const part =
    clean.length <= room && clean === runId.toLowerCase() && /^[a-z0-9]/.test(clean) && !clean.endsWith('-')
      ? clean
      : createHash('sha256').update(runId).digest('hex').slice(0, Math.min(40, room));
  return `hangar-run-${part}${suffix}`;
}
