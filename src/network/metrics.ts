import { Counter } from 'prom-client';
import { metricsRegistry } from '../platform/metrics.js';

const refusals = new Counter({
  name: 'hangar_network_refusals_total',
  help:
    "Connections and names the egress proxy refused, every attempt, by the run's environment (its uid), phase " +
    '(setup or agent) and reason',
  labelNames: ['environment', 'phase', 'reason'] as const,
  registers: [metricsRegistry],
});

export function countRefusal(environment: string | null, phase: string, reason: string): void {
  refusals.inc({ environment: environment ?? 'none', phase, reason });
}
