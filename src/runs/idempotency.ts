// Idempotency-Key on run creation, the convention of Stripe and of the IETF draft "The Idempotency-Key HTTP Header
// Field": a client that lost the answer to a create (a dropped connection, a killed server) retries with the same
// key and gets the first answer, and no second run. The key's row is written in the transaction that inserts the
// run, so a committed run always has its key and a rolled-back one never does; concurrent requests with one key
// meet on the row's primary key, and all but one roll back and answer what the one committed.
import { createHash } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { type Kysely, sql } from 'kysely';
import type { DB } from '../database.js';
import { conflict, idempotencyKeyReused } from '../platform/http/errors.js';
import { PollingLoop } from '../platform/loop.js';
import type { RunLifecycle } from './lifecycle/run-lifecycle.js';
import type { CapacityLimits, NewAttachment, NewRun } from './lifecycle/types.js';

/** How long a key stands for its first answer, per team. */
export const IDEMPOTENCY_KEY_HOURS = 24;
/** Longest key accepted: the draft sets no limit, Stripe's is 255. */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

/** The answer to a create, as the first request with a key got it. */
export interface CreatedRun {
  run_id: string;
  task_id: string;
  state: string;
  at_capacity?: boolean;
}

/** A create's key and what identifies its request (who sent it, and the body). */
export interface IdempotencyKey {
  key: string;
  requestHash: string;
}

/**
 * The key of a create sent by `principalUid` with `body`. The hash covers the sender too: another member of the
 * team who sends the same key is refused rather than told about a run that may be private to its creator.
 */
export function idempotencyKey(key: string, principalUid: string, body: unknown): IdempotencyKey {
  const requestHash = createHash('sha256')
    .update(canonicalJson({ principal: principalUid, body }))
    .digest('hex');
  return { key, requestHash };
}

/** JSON with object members in sorted order: the same body hashes the same whatever order its members came in. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const members = Object.entries(value)
      .filter(([, member]) => member !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${members.map(([name, member]) => `${JSON.stringify(name)}:${canonicalJson(member)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** Where a keyed create is written: its run, through the lifecycle, with its key, in one transaction. */
export interface IdempotentCreateTarget {
  db: Kysely<DB>;
  lifecycle: RunLifecycle;
  limits: CapacityLimits;
  /** Called once the new run is committed, to wake the engines. */
  onQueued(): void;
}

/** Thrown inside the transaction to roll back a run whose key another request has committed meanwhile. */
class KeyTaken extends Error {}

/**
 * Creates the run `prepare` builds, once per team and key within the window. `replayed` is true when the answer
 * is the first request's, and no run was created. The same key with another request is refused with 422.
 */
export async function createOnce(
  target: IdempotentCreateTarget,
  teamUid: string,
  key: IdempotencyKey,
  prepare: () => Promise<{ run: NewRun; attachments: NewAttachment[] }>,
): Promise<{ answer: CreatedRun; replayed: boolean }> {
  // Before any check of the request: a retry gets the first answer even if what the run refers to (an
  // environment, an agent identity) has changed since.
  const earlier = await firstAnswer(target.db, teamUid, key);
  if (earlier) return { answer: earlier, replayed: true };

  const { run, attachments } = await prepare();
  try {
    const answer = await target.db.transaction().execute(async (trx) => {
      const lifecycle = target.lifecycle.within(trx);
      const { atCapacity } = await lifecycle.insert([run], target.limits);
      await lifecycle.attach(run.id, attachments);
      const created: CreatedRun = {
        run_id: run.id,
        task_id: run.id,
        state: run.state,
        ...(atCapacity ? { at_capacity: true } : {}),
      };
      // A concurrent request with the key waits here for the one holding it, then finds it committed.
      if (!(await recordKey(trx, teamUid, key, created))) throw new KeyTaken();
      return created;
    });
    target.lifecycle.countCreated([run]);
    target.onQueued();
    return { answer, replayed: false };
  } catch (error) {
    if (!(error instanceof KeyTaken)) throw error;
  }
  const winner = await firstAnswer(target.db, teamUid, key);
  // Only if the other request's key expired in between: a retry starts over.
  if (!winner)
    throw conflict('another request with this Idempotency-Key was being answered; retry', { retryable: true });
  return { answer: winner, replayed: true };
}

const windowStart = () => sql<Date>`clock_timestamp() - make_interval(hours => ${IDEMPOTENCY_KEY_HOURS})`;

/** The first answer given under the key within the window; 422 when that request was another one. */
async function firstAnswer(db: Kysely<DB>, teamUid: string, key: IdempotencyKey): Promise<CreatedRun | undefined> {
  const row = await db
    .selectFrom('run_idempotency_keys')
    .select(['request_hash', 'answer'])
    .where('team_uid', '=', teamUid)
    .where('idempotency_key', '=', key.key)
    .where('created_at', '>', windowStart())
    .executeTakeFirst();
  if (!row) return undefined;
  if (row.request_hash !== key.requestHash) {
    throw idempotencyKeyReused(
      `Idempotency-Key "${key.key}" was used in the last ${IDEMPOTENCY_KEY_HOURS} hours for a different request (another body, or another sender); send a new key for a new run`,
    );
  }
  return row.answer;
}

/** Takes the key for this answer; false when another request holds it within the window. An expired row is reused. */
async function recordKey(db: Kysely<DB>, teamUid: string, key: IdempotencyKey, answer: CreatedRun): Promise<boolean> {
  const row = await db
    .insertInto('run_idempotency_keys')
    .values({
      team_uid: teamUid,
      idempotency_key: key.key,
      request_hash: key.requestHash,
      answer: JSON.stringify(answer),
    })
    .onConflict((on) =>
      on
        .columns(['team_uid', 'idempotency_key'])
        .doUpdateSet({
          request_hash: (eb) => eb.ref('excluded.request_hash'),
          answer: (eb) => eb.ref('excluded.answer'),
          created_at: sql`clock_timestamp()`,
        })
        .where('run_idempotency_keys.created_at', '<=', windowStart()),
    )
    .returning('team_uid')
    .executeTakeFirst();
  return row !== undefined;
}

/** Deletes the keys past the window (a look-up ignores them already). */
export async function pruneIdempotencyKeys(db: Kysely<DB>): Promise<void> {
  await db.deleteFrom('run_idempotency_keys').where('created_at', '<=', windowStart()).execute();
}

/** Prunes the keys past the window now and then; idempotent deletes, so every engine process may run it. */
export function idempotencyKeyRetention(db: Kysely<DB>, log: FastifyBaseLogger, intervalMs = 15 * 60_000): PollingLoop {
  return new PollingLoop({
    intervalMs,
    waitFirst: true,
    pass: () => pruneIdempotencyKeys(db),
    onError: (error) => log.warn({ err: error }, 'idempotency key retention pass failed'),
  });
}
