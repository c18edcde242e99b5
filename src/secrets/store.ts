import { sql, type Kysely } from 'kysely';
import type { SealedValue } from '../platform/crypto.js';
import type { DB } from '../platform/db/schema.js';

export interface SecretRow {
  name: string;
  created_at: Date;
  updated_at: Date;
}

const summary = ['name', 'created_at', 'updated_at'] as const;

function sealedColumns(sealed: SealedValue) {
  return { iv: sealed.iv, auth_tag: sealed.authTag, ciphertext: sealed.ciphertext };
}

export async function listSecrets(db: Kysely<DB>, teamUid: string): Promise<SecretRow[]> {
  // By code point, whatever the database's locale, so every deployment lists in the same order.
  return db.selectFrom('secrets').select(summary).where('team_uid', '=', teamUid).orderBy(sql`name COLLATE "C"`).execute();
}

/** undefined when the team already has a secret of that name. */
export async function insertSecret(db: Kysely<DB>, teamUid: string, name: string, sealed: SealedValue): Promise<SecretRow | undefined> {
  return db
    .insertInto('secrets')
    .values({ team_uid: teamUid, name, ...sealedColumns(sealed) })
    .onConflict((oc) => oc.columns(['team_uid', 'name']).doNothing())
    .returning(summary)
    .executeTakeFirst();
}

export async function updateSecret(db: Kysely<DB>, teamUid: string, name: string, sealed: SealedValue): Promise<SecretRow | undefined> {
  return db
    .updateTable('secrets')
    .set({ ...sealedColumns(sealed), updated_at: sql`clock_timestamp()` })
    .where('team_uid', '=', teamUid)
    .where('name', '=', name)
    .returning(summary)
    .executeTakeFirst();
}

export async function deleteSecret(db: Kysely<DB>, teamUid: string, name: string): Promise<boolean> {
  const result = await db.deleteFrom('secrets').where('team_uid', '=', teamUid).where('name', '=', name).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export async function findSealed(db: Kysely<DB>, teamUid: string, name: string): Promise<SealedValue | undefined> {
  const row = await db
    .selectFrom('secrets')
    .select(['iv', 'auth_tag', 'ciphertext'])
    .where('team_uid', '=', teamUid)
    .where('name', '=', name)
    .executeTakeFirst();
  return row && { iv: row.iv, authTag: row.auth_tag, ciphertext: row.ciphertext };
}

export async function existingNames(db: Kysely<DB>, teamUid: string, names: string[]): Promise<Set<string>> {
  if (names.length === 0) return new Set();
  const rows = await db.selectFrom('secrets').select('name').where('team_uid', '=', teamUid).where('name', 'in', names).execute();
  return new Set(rows.map((row) => row.name));
}
