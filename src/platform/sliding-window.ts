/**
 * A sliding one-minute window, estimated from two fixed ones: the current minute's count plus the previous
 * minute's, weighted by how much of it the last 60 seconds still cover.
 */
export function slidingCount(now: number, before: number, elapsed: number): number {
  return now + (before * Math.max(0, 60 - elapsed)) / 60;
}

/** Whole seconds until the sliding count falls to `limit`, if no more events come. */
export function secondsUntilBelow(now: number, before: number, elapsed: number, limit: number): number {
  const left = 60 - elapsed;
  if (now <= limit && before > 0) {
    // Still this minute: the previous minute's share shrinks until the sum fits.
    return Math.max(1, Math.ceil(left - (60 * (limit - now)) / before));
  }
  // Next minute: only this minute's events remain, shrinking the same way.
  return Math.max(1, Math.ceil(left + (now > 0 ? 60 * Math.max(0, 1 - limit / now) : 0)));
}
