import { Counter } from 'prom-client';
import { metricsRegistry } from '../platform/metrics.js';

const firings = new Counter({
  name: 'hangar_automation_runs_total',
  help: "Automation firings, by outcome: started (the automation's run was created) or refused (it could not be)",
  labelNames: ['outcome'] as const,
  registers: [metricsRegistry],
});

/** Firings of one committed evaluation pass. */
export function observeFirings(started: number, refused: number): void {
  if (started > 0) firings.inc({ outcome: 'started' }, started);
  if (refused > 0) firings.inc({ outcome: 'refused' }, refused);
}
