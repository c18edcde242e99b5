import { type Kysely, sql } from 'kysely';
import type { DB } from '../database.js';

/** The window of the limits on GitHub-started runs. */
const WINDOW = sql`interval '1 hour'`;

export interface TriggerLimits {
  /** Deliveries that may start runs per repository and per GitHub user in any hour. */
  perRepository: number;
  perUser: number;
}

/**
 * Counts a delivery of `login` on `repository` against the hourly limits, inside the transaction that starts its
 * runs: `true` when it fits (and it is counted), `false` when a limit is reached (nothing is counted). Deliveries
 * for one repository take turns (a transaction-scoped advisory lock), so replicas cannot all pass the same count.
 */
export async function countTriggerStart(
  trx: Kysely<DB>,
  repository: string,
  login: string,
  limits: TriggerLimits,
): Promise<boolean> {
  const repo = repository.toLowerCase();
  const user = login.toLowerCase();
  await sql`SELECT pg_advisory_xact_lock(hashtext(${`hangar:github-trigger:${repo}`}))`.execute(trx);
  // What the window no longer covers goes as new starts come (an index range on the age: nothing else reads it).
  await sql`DELETE FROM github_trigger_starts WHERE started_at < clock_timestamp() - ${WINDOW}`.execute(trx);
  const { rows } = await sql<{ by_repository: string; by_user: string }>`
    SELECT
      (SELECT count(*) FROM github_trigger_starts WHERE repository = ${repo} AND started_at >= clock_timestamp() - ${WINDOW}) AS by_repository,
      (SELECT count(*) FROM github_trigger_starts WHERE login = ${user} AND started_at >= clock_timestamp() - ${WINDOW}) AS by_user`.execute(
    trx,
  );
  const counts = rows[0];
  if (Number(counts?.by_repository ?? 0) >= limits.perRepository) return false;
  if (Number(counts?.by_user ?? 0) >= limits.perUser) return false;
  await trx.insertInto('github_trigger_starts').values({ repository: repo, login: user }).execute();
  return true;
}

/**
 * Claims the one answer a GitHub user gets in a thread for a refusal of this kind: `true` the first time (post
 * it), `false` after (they were told). Claims older than 30 days are dropped as new ones come.
 */
export async function claimRefusalReply(
  db: Kysely<DB>,
  refusal: { repository: string; number: number; login: string; reason: 'access' | 'rate' },
): Promise<boolean> {
  await db
    .deleteFrom('github_trigger_refusals')
    .where('created_at', '<', sql<Date>`clock_timestamp() - interval '30 days'`)
    .execute();
  const row = await db
    .insertInto('github_trigger_refusals')
    .values({
      repository: refusal.repository.toLowerCase(),
      number: refusal.number,
      login: refusal.login.toLowerCase(),
      reason: refusal.reason,
    })
    .onConflict((oc) => oc.doNothing())
    .returning('login')
    .executeTakeFirst();
  return row !== undefined;
}

/** Gives back a claim whose reply GitHub did not take, so that the next refusal tries again. */
export async function releaseRefusalReply(
  db: Kysely<DB>,
  refusal: { repository: string; number: number; login: string; reason: 'access' | 'rate' },
): Promise<void> {
  await db
    .deleteFrom('github_trigger_refusals')
    .where('repository', '=', refusal.repository.toLowerCase())
    .where('number', '=', String(refusal.number) as never)
    .where('login', '=', refusal.login.toLowerCase())
    .where('reason', '=', refusal.reason)
    .execute();
}
