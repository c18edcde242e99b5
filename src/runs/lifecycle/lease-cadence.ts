/**
 * How often a lease holder renews, how often runs are looked at for takeback, and how stale an engine's heartbeat
 * must be before a free lock counts as its death, from the lease length. Engines and the worker hub keep the same
 * cadence: renewal well inside the lease (a third, between 0.5 and 2 s). Takeback looks as often (a dead engine is
 * noticed within about three renewals) and besides wakes exactly when the earliest lease passes.
 */
export function leaseRenewalIntervalMs(leaseSeconds: number): number {
  return Math.max(500, Math.min(2000, (leaseSeconds * 1000) / 3));
}

export function takebackCheckIntervalMs(leaseSeconds: number): number {
  return leaseRenewalIntervalMs(leaseSeconds);
}

/** Two renewals missed: an engine alive whose lock connection alone was cut heartbeats within one. */
export function engineGraceSeconds(leaseSeconds: number): number {
  return (2 * leaseRenewalIntervalMs(leaseSeconds)) / 1000;
}
