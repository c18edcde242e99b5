import { Gauge, Histogram } from 'prom-client';
import { metricsRegistry, REQUEST_SECONDS_BUCKETS } from '../../platform/metrics.js';

/** The engine's metrics: what this replica executes now, and how fast it picks runs up (their setup time is the run lifecycle's: workers report theirs). */

const registers = [metricsRegistry];

export const executionsInFlight = new Gauge({
  name: 'hangar_executions_in_flight',
  help: "Executions this replica's engine is running now (claimed, setting up, or with their agent running)",
  registers,
});

export const dispatchPickup = new Histogram({
  name: 'hangar_dispatch_pickup_seconds',
  help: "Time of one dispatch pass of this replica's engine: from its start (woken by a new run, freed capacity or its interval) to its claimed runs' executions starting",
  buckets: REQUEST_SECONDS_BUCKETS,
  registers,
});
