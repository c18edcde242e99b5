import { Counter, Histogram } from 'prom-client';
import { metricsRegistry } from '../platform/metrics.js';

const registers = [metricsRegistry];

const fired = new Counter({
  name: 'hangar_cron_ticks_fired_total',
  help: "Schedule ticks fired, by outcome: started (the tick's run was created) or refused (it could not be)",
  labelNames: ['outcome'] as const,
  registers,
});

const delay = new Histogram({
  name: 'hangar_cron_tick_delay_seconds',
  help: 'Time from the second a schedule tick was due to the scheduler firing it',
  buckets: [0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 900, 3600],
  registers,
});

/** A tick the scheduler fired, once its transaction committed. */
export interface FiredTick {
  delaySeconds: number;
  started: boolean;
}

export function observeTicks(ticks: FiredTick[]): void {
  for (const tick of ticks) {
    fired.inc({ outcome: tick.started ? 'started' : 'refused' });
    delay.observe(tick.delaySeconds);
  }
}
