import { Counter } from 'prom-client';
import { metricsRegistry } from '../platform/metrics.js';

/**
 * Deliveries by how the ingress answered them: the statuses of the delivery log (`Accepted`, `Duplicate`,
 * `Rejected (auth)`, `Rejected (invalid JSON)`, `Rejected (too large)`), and two the log cannot hold because no
 * webhook is known or the sender is held back: `Rejected (no webhook)` and `Rejected (rate limited)`.
 */
const deliveries = new Counter({
  name: 'hangar_webhook_deliveries_total',
  help: 'Webhook deliveries received, by status (Accepted, Duplicate, Rejected (auth), ...)',
  labelNames: ['status'] as const,
  registers: [metricsRegistry],
});

export type DeliveryOutcome =
  | 'Accepted'
  | 'Duplicate'
  | 'Rejected (auth)'
  | 'Rejected (invalid JSON)'
  | 'Rejected (too large)'
  | 'Rejected (no webhook)'
  | 'Rejected (rate limited)';

export function countDelivery(status: DeliveryOutcome): void {
  deliveries.inc({ status });
}
