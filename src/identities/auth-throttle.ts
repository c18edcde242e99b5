import { randomInt } from 'node:crypto';
import { isIPv4, isIPv6 } from 'node:net';
import { type Kysely, sql } from 'kysely';
import type { DB } from '../database.js';
import { type ApiError, tooManyRequests } from '../platform/http/errors.js';
import { secondsUntilBelow, slidingCount } from '../platform/sliding-window.js';

/** Counter shards per client and minute: concurrent failures of one client rarely update the same row. */
const SHARDS = 8;
/** Blocked addresses kept before the expired ones are swept out. */
const SWEEP_AT = 10_000;

/**
 * What failures are counted by: an IPv4 address, or the /64 network of an IPv6 one (one host usually holds a
 * whole /64, and counting its 2^64 addresses one by one would not throttle it at all).
 */
export function clientGroup(address: string): string {
  if (!isIPv6(address)) return address;
  const bare = address.split('%')[0]!.toLowerCase();
  if (bare.startsWith('::ffff:') && isIPv4(bare.slice(7))) return bare.slice(7);
  const [left, right] = bare.includes('::') ? bare.split('::') : [bare, undefined];
  const head = left ? left.split(':') : [];
  const tail = right ? right.split(':') : [];
  const groups =
    right === undefined ? head : [...head, ...Array<string>(8 - head.length - tail.length).fill('0'), ...tail];
  return `${groups
    .slice(0, 4)
    .map((group) => group.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

function tooMany(retryAfter: number): ApiError {
  return tooManyRequests(`too many failed authentications from this address; retry in ${retryAfter} s`, retryAfter);
}

/**
 * Throttles API-key guessing: failed authentications are counted per client (clientGroup) and minute in the database,
 * so every replica sees the same count, over a sliding minute. Past the limit, a failure answers 429 with
 * Retry-After, and the replica that saw it refuses every request of that client with a key until then, the right
 * key included (a guess that happens to be right is not let through). Requests that succeed cost nothing here.
 * A replica that has not yet seen a failure of a blocked client answers its first attempt normally; so a client
 * gets at most one more attempt per replica and block.
 */
export class AuthFailureThrottle {
  private readonly blockedUntil = new Map<string, number>();

  constructor(
    private readonly db: Kysely<DB>,
    private readonly failuresPerMinute: number,
  ) {}

  /** Throws 429 while `address` is blocked on this replica. */
  refuseIfBlocked(address: string, now = Date.now()): void {
    const client = clientGroup(address);
    const until = this.blockedUntil.get(client);
    if (until === undefined) return;
    if (until > now) throw tooMany(Math.ceil((until - now) / 1000));
    this.blockedUntil.delete(client);
  }

  /** Counts a failed authentication from `address`; throws 429 when it takes its client past the limit. */
  async failed(address: string): Promise<void> {
    const client = clientGroup(address);
    const result = await sql<{ now_count: string | null; before_count: string | null; elapsed: number }>`
      WITH bumped AS (
        INSERT INTO auth_failure_windows (client, window_start, shard, count)
        VALUES (${client}, date_trunc('minute', now()), ${randomInt(SHARDS)}, 1)
        ON CONFLICT (client, window_start, shard) DO UPDATE SET count = auth_failure_windows.count + 1
      ), pruned AS (
        DELETE FROM auth_failure_windows WHERE window_start < date_trunc('minute', now()) - interval '2 minutes'
      )
      SELECT
        sum(count) FILTER (WHERE window_start = date_trunc('minute', now())) AS now_count,
        sum(count) FILTER (WHERE window_start < date_trunc('minute', now())) AS before_count,
        extract(epoch FROM now() - date_trunc('minute', now()))::float8 AS elapsed
      FROM auth_failure_windows
      WHERE client = ${client} AND window_start >= date_trunc('minute', now()) - interval '1 minute'`.execute(this.db);
    const row = result.rows[0]!;
    // The statement's snapshot does not see its own increment.
    const current = Number(row.now_count ?? 0) + 1;
    const before = Number(row.before_count ?? 0);
    if (slidingCount(current, before, row.elapsed) <= this.failuresPerMinute) return;
    const retryAfter = secondsUntilBelow(current, before, row.elapsed, this.failuresPerMinute);
    const now = Date.now();
    // Many addresses blocked once (an attacker rotating them) must not grow the map for ever.
    if (this.blockedUntil.size >= SWEEP_AT)
      for (const [address, until] of this.blockedUntil) if (until <= now) this.blockedUntil.delete(address);
    this.blockedUntil.set(client, now + retryAfter * 1000);
    throw tooMany(retryAfter);
  }
}
