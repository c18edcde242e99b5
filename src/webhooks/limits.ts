import { randomInt } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import type { DB } from '../database.js';
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

/** One sender of one webhook; an address holds no newline, so two different pairs never share a key. */
const senderKey = (uid: string, sender: string) => `${uid}\n${sender}`;

export interface SenderLookup {
  uid: string;
  sender: string;
}

/**
 * For each request, the enabled webhook its UID names and its sender's counts with this delivery counted; one
 * statement for a whole batch, and nothing is written for a UID that names no enabled webhook. Requests of one
 * sender in the batch are counted in order, as if they had come one after the other.
 */
export async function lookUpAndCount(
  db: Kysely<DB>,
  requests: SenderLookup[],
): Promise<Array<{ webhook: WebhookRow; counts: SenderCounts } | undefined>> {
  // One counter row per (webhook, sender) in the statement: an upsert may not touch the same row twice.
  const groups = new Map<string, { uid: string; sender: string; n: number; shard: number }>();
  for (const request of requests) {
    const key = senderKey(request.uid, request.sender);
    const group = groups.get(key) ?? { uid: request.uid, sender: request.sender, n: 0, shard: randomInt(SHARDS) };
    group.n++;
    groups.set(key, group);
  }
  type Row = WebhookRow & {
    input_sender: string;
    deliveries_now: string | null;
    deliveries_before: string | null;
    failures_now: string | null;
    failures_before: string | null;
    elapsed: number;
  };
  const result = await sql<Row>`
    WITH input AS (SELECT * FROM jsonb_to_recordset(${JSON.stringify([...groups.values()])}::jsonb) AS i(uid text, sender text, n int, shard int)),
    hook AS (SELECT * FROM webhooks WHERE uid IN (SELECT uid FROM input) AND enabled),
    bumped AS (
      INSERT INTO webhook_rate_windows (webhook_uid, sender, kind, window_start, shard, count)
      SELECT i.uid, i.sender, 'delivery', date_trunc('minute', now()), i.shard, i.n FROM input i JOIN hook h ON h.uid = i.uid
      ON CONFLICT (webhook_uid, sender, window_start, kind, shard) DO UPDATE SET count = webhook_rate_windows.count + EXCLUDED.count
    ), counts AS (
      SELECT r.webhook_uid, r.sender,
        sum(r.count) FILTER (WHERE r.kind = 'delivery' AND r.window_start = date_trunc('minute', now())) AS deliveries_now,
        sum(r.count) FILTER (WHERE r.kind = 'delivery' AND r.window_start < date_trunc('minute', now())) AS deliveries_before,
        sum(r.count) FILTER (WHERE r.kind = 'auth_failure' AND r.window_start = date_trunc('minute', now())) AS failures_now,
        sum(r.count) FILTER (WHERE r.kind = 'auth_failure' AND r.window_start < date_trunc('minute', now())) AS failures_before
      FROM webhook_rate_windows r JOIN input i ON r.webhook_uid = i.uid AND r.sender = i.sender
      WHERE r.window_start >= date_trunc('minute', now()) - interval '1 minute'
      GROUP BY r.webhook_uid, r.sender
    )
    SELECT h.*, i.sender AS input_sender, c.deliveries_now, c.deliveries_before, c.failures_now, c.failures_before,
      extract(epoch FROM now() - date_trunc('minute', now()))::float8 AS elapsed
    FROM input i JOIN hook h ON h.uid = i.uid
    LEFT JOIN counts c ON c.webhook_uid = i.uid AND c.sender = i.sender`.execute(db);
  const found = new Map(result.rows.map((row) => [senderKey(row.uid, row.input_sender), row]));
  const seen = new Map<string, number>();
  return requests.map((request) => {
    const key = senderKey(request.uid, request.sender);
    const row = found.get(key);
    if (!row) return undefined;
    const {
      input_sender: _sender,
      deliveries_now,
      deliveries_before,
      failures_now,
      failures_before,
      elapsed,
      ...webhook
    } = row;
    // The statement's snapshot does not see its own increments: this request is the next one of its sender.
    const position = (seen.get(key) ?? 0) + 1;
    seen.set(key, position);
    return {
      webhook: webhook as WebhookRow,
      counts: {
        deliveriesNow: Number(deliveries_now ?? 0) + position,
        deliveriesBefore: Number(deliveries_before ?? 0),
        failuresNow: Number(failures_now ?? 0),
        failuresBefore: Number(failures_before ?? 0),
        elapsed,
      },
    };
  });
}

export async function countAuthFailure(db: Kysely<DB>, uid: string, sender: string): Promise<void> {
  await sql`
    INSERT INTO webhook_rate_windows (webhook_uid, sender, kind, window_start, shard, count)
    VALUES (${uid}, ${sender}, 'auth_failure', date_trunc('minute', now()), ${randomInt(SHARDS)}, 1)
    ON CONFLICT (webhook_uid, sender, window_start, kind, shard) DO UPDATE SET count = webhook_rate_windows.count + 1`.execute(
    db,
  );
}

/** Counters of minutes no check reads any more. */
export async function pruneRateWindows(db: Kysely<DB>): Promise<void> {
  await sql`DELETE FROM webhook_rate_windows WHERE window_start < date_trunc('minute', now()) - interval '2 minutes'`.execute(
    db,
  );
}

/**
 * A sender's failed authentications in the current and the previous minute, for a receiver outside the team
 * webhooks (`scope`, e.g. the GitHub App's webhook), with the seconds into the current minute.
 */
export async function authFailureCounts(
  db: Kysely<DB>,
  scope: string,
  sender: string,
): Promise<Pick<SenderCounts, 'failuresNow' | 'failuresBefore' | 'elapsed'>> {
  const result = await sql<{ failures_now: string | null; failures_before: string | null; elapsed: number }>`
    SELECT
      sum(count) FILTER (WHERE window_start = date_trunc('minute', now())) AS failures_now,
      sum(count) FILTER (WHERE window_start < date_trunc('minute', now())) AS failures_before,
      extract(epoch FROM now() - date_trunc('minute', now()))::float8 AS elapsed
    FROM webhook_rate_windows
    WHERE webhook_uid = ${scope} AND sender = ${sender} AND kind = 'auth_failure'
      AND window_start >= date_trunc('minute', now()) - interval '1 minute'`.execute(db);
  const row = result.rows[0];
  return {
    failuresNow: Number(row?.failures_now ?? 0),
    failuresBefore: Number(row?.failures_before ?? 0),
    elapsed: Number(row?.elapsed ?? 0),
  };
}
