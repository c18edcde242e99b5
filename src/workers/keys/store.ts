import { type Kysely, sql } from 'kysely';
import type { DB } from '../../database.js';
import { apiKeyDisplayPrefix, hashApiKey, newUid } from '../../platform/crypto.js';

/** Worker keys by hash only: the key itself exists once, in the answer that created it. */

export interface WorkerKeyRow {
  uid: string;
  team_uid: string;
  name: string;
  display_prefix: string;
  worker_id: string;
  created_by_uid: string | null;
  created_at: Date;
  revoked_at: Date | null;
}

const columns = [
  'uid',
  'team_uid',
  'name',
  'display_prefix',
  'worker_id',
  'created_by_uid',
  'created_at',
  'revoked_at',
] as const;

export async function insertWorkerKey(
  db: Kysely<DB>,
  values: { teamUid: string; key: string; name: string; workerId: string; createdBy: string | null },
): Promise<string> {
  const uid = newUid();
  await db
    .insertInto('worker_keys')
    .values({
      uid,
      team_uid: values.teamUid,
      key_hash: hashApiKey(values.key),
      display_prefix: apiKeyDisplayPrefix(values.key),
      name: values.name,
      worker_id: values.workerId,
      created_by_uid: values.createdBy,
    })
    .execute();
  return uid;
}

export async function listWorkerKeys(db: Kysely<DB>, teamUid: string, uid?: string): Promise<WorkerKeyRow[]> {
  let query = db.selectFrom('worker_keys').select(columns).where('team_uid', '=', teamUid);
  if (uid !== undefined) query = query.where('uid', '=', uid);
  return query.orderBy('created_at').orderBy('uid').execute();
}

/** Idempotent: revoking a revoked key keeps its first revocation time. False when the team has no such key. */
export async function revokeWorkerKey(db: Kysely<DB>, teamUid: string, uid: string): Promise<boolean> {
  const result = await db
    .updateTable('worker_keys')
    .set({ revoked_at: sql`coalesce(revoked_at, clock_timestamp())` })
    .where('team_uid', '=', teamUid)
    .where('uid', '=', uid)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** The unrevoked key with this hash (read at every connect, so a revocation holds on every replica at once). */
export async function findActiveWorkerKey(db: Kysely<DB>, keyHash: string): Promise<WorkerKeyRow | undefined> {
  return db
    .selectFrom('worker_keys')
    .select(columns)
    .where('key_hash', '=', keyHash)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
}

/** Which of these keys are still valid: the hub closes the connections of the others. */
export async function activeWorkerKeyUids(db: Kysely<DB>, uids: string[]): Promise<Set<string>> {
  if (uids.length === 0) return new Set();
  const rows = await db
    .selectFrom('worker_keys')
    .select('uid')
    .where('uid', 'in', uids)
    .where('revoked_at', 'is', null)
    .execute();
  return new Set(rows.map((row) => row.uid));
}
