import { randomInt } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { DB } from '../platform/db/schema.js';
import type { WebhookRow } from './store.js';

/** Counter shards per sender and minute (see migration 0011). */
const SHARDS = 8;

export interface SenderCounts {
  /** Deliveries in the current minute, this one included, and in the minute before. */
  deliveriesNow: number;
  deliveriesBefore: number;
  failuresNow: number;
  failuresBefore: number;
  /** Seconds into the current minute. */
  elapsed: number;
}

/**
 * The enabled webhook named by `uid` and its sender's counts, with this delivery counted: one round trip, and
 * nothing is written for a UID that names no enabled webhook.
 */
export async function lookUpAndCount(db: Kysely<DB>, uid: string, sender: string): Promise<{ webhook: WebhookRow; counts: SenderCounts } | undefined> {
  const result = await sql<WebhookRow & { deliveries_now: string; deliveries_before: string; failures_now: string; failures_before: string; elapsed: number }>`
    WITH hook AS (SELECT * FROM webhooks WHERE uid = ${uid} AND enabled),
    bumped AS (
      INSERT INTO webhook_rate_windows (webhook_uid, sender, kind, window_start, shard, count)
      SELECT hook.uid, ${sender}, 'delivery', date_trunc('minute', now()), ${randomInt(SHARDS)}, 1 FROM hook
      ON CONFLICT (webhook_uid, sender, window_start, kind, shard) DO UPDATE SET count = webhook_rate_windows.count + 1
      RETURNING 1
    ), counts AS (
      SELECT
        coalesce(sum(count) FILTER (WHERE kind = 'delivery' AND window_start = date_trunc('minute', now())), 0) AS deliveries_now,
        coalesce(sum(count) FILTER (WHERE kind = 'delivery' AND window_start < date_trunc('minute', now())), 0) AS deliveries_before,
        coalesce(sum(count) FILTER (WHERE kind = 'auth_failure' AND window_start = date_trunc('minute', now())), 0) AS failures_now,
        coalesce(sum(count) FILTER (WHERE kind = 'auth_failure' AND window_start < date_trunc('minute', now())), 0) AS failures_before
      FROM webhook_rate_windows
      WHERE webhook_uid = ${uid} AND sender = ${sender} AND window_start >= date_trunc('minute', now()) - interval '1 minute'
    )
    SELECT hook.*, counts.*, extract(epoch FROM now() - date_trunc('minute', now()))::float8 AS elapsed
    FROM hook, counts, (SELECT count(*) FROM bumped) AS written`.execute(db);
  const row = result.rows[0];
  if (!row) return undefined;
  const { deliveries_now, deliveries_before, failures_now, failures_before, elapsed, ...webhook } = row;
  return {
    webhook: webhook as WebhookRow,
    // The statement's snapshot does not see its own increment.
    counts: { deliveriesNow: Number(deliveries_now) + 1, deliveriesBefore: Number(deliveries_before), failuresNow: Number(failures_now), failuresBefore: Number(failures_before), elapsed },
  };
}

export async function countAuthFailure(db: Kysely<DB>, uid: string, sender: string): Promise<void> {
  await sql`
    INSERT INTO webhook_rate_windows (webhook_uid, sender, kind, window_start, shard, count)
    VALUES (${uid}, ${sender}, 'auth_failure', date_trunc('minute', now()), ${randomInt(SHARDS)}, 1)
    ON CONFLICT (webhook_uid, sender, window_start, kind, shard) DO UPDATE SET count = webhook_rate_windows.count + 1`.execute(db);
}

/** Counters of minutes no check reads any more. */
export async function pruneRateWindows(db: Kysely<DB>): Promise<void> {
  await sql`DELETE FROM webhook_rate_windows WHERE window_start < date_trunc('minute', now()) - interval '2 minutes'`.execute(db);
}

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
