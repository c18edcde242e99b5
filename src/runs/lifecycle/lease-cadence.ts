/**
 * How often a lease holder renews and how often expired leases are looked for, from the lease length. Engines and
 * the worker hub keep the same cadence: renewal well inside the lease (a third, between 0.5 and 2 s), expiry checks
 * at most every 5 s or half a lease.
 */
export function leaseRenewalIntervalMs(leaseSeconds: number): number {
  return Math.max(500, Math.min(2000, (leaseSeconds * 1000) / 3));
}

export function leaseExpiryCheckIntervalMs(leaseSeconds: number): number {
  return Math.min(5000, (leaseSeconds * 1000) / 2);
}
