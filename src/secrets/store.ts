import { type Kysely, sql } from 'kysely';
import type { DB } from '../database.js';
import type { SealedValue } from '../platform/crypto.js';

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
  return db
    .selectFrom('secrets')
    .select(summary)
    .where('team_uid', '=', teamUid)
    .orderBy(sql`name COLLATE "C"`)
    .execute();
}

/** Fails on secrets_pkey when the team already has a secret of that name. */
export async function insertSecret(
  db: Kysely<DB>,
  teamUid: string,
  name: string,
  sealed: SealedValue,
): Promise<SecretRow> {
  return db
    .insertInto('secrets')
    .values({ team_uid: teamUid, name, ...sealedColumns(sealed) })
    .returning(summary)
    .executeTakeFirstOrThrow();
}

export async function updateSecret(
  db: Kysely<DB>,
  teamUid: string,
  name: string,
  sealed: SealedValue,
): Promise<SecretRow | undefined> {
  return db
    .updateTable('secrets')
    .set({ ...sealedColumns(sealed), updated_at: sql`clock_timestamp()` })
    .where('team_uid', '=', teamUid)
    .where('name', '=', name)
    .returning(summary)
    .executeTakeFirst();
}

export async function deleteSecret(db: Kysely<DB>, teamUid: string, name: string): Promise<boolean> {
  const result = await db
    .deleteFrom('secrets')
    .where('team_uid', '=', teamUid)
    .where('name', '=', name)
    .executeTakeFirst();
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
  const rows = await db
    .selectFrom('secrets')
    .select('name')
    .where('team_uid', '=', teamUid)
    .where('name', 'in', names)
    .execute();
  return new Set(rows.map((row) => row.name));
}

export type GranteeType = 'member' | 'agent' | 'environment';

export interface GrantRow {
  grantee_type: GranteeType;
  grantee_uid: string;
  created_at: Date;
}

/** false when the grant was there already. */
export async function insertGrant(
  db: Kysely<DB>,
  teamUid: string,
  name: string,
  type: GranteeType,
  uid: string,
): Promise<boolean> {
  const inserted = await db
    .insertInto('secret_grants')
    .values({ team_uid: teamUid, secret_name: name, grantee_type: type, grantee_uid: uid })
    .onConflict((oc) => oc.doNothing())
    .returning('grantee_uid')
    .executeTakeFirst();
  return inserted !== undefined;
}

export async function deleteGrant(
  db: Kysely<DB>,
  teamUid: string,
  name: string,
  type: GranteeType,
  uid: string,
): Promise<boolean> {
  const result = await db
    .deleteFrom('secret_grants')
    .where('team_uid', '=', teamUid)
    .where('secret_name', '=', name)
    .where('grantee_type', '=', type)
    .where('grantee_uid', '=', uid)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export async function listGrants(db: Kysely<DB>, teamUid: string, name: string): Promise<GrantRow[]> {
  return db
    .selectFrom('secret_grants')
    .select(['grantee_type', 'grantee_uid', 'created_at'])
    .where('team_uid', '=', teamUid)
    .where('secret_name', '=', name)
    .orderBy('grantee_type')
    .orderBy(sql`grantee_uid COLLATE "C"`)
    .execute();
}

/** Who a run acts as, for deciding which team secrets it may use. */
export interface SecretUser {
  teamUid: string;
  /** The user (or agent key) that created the run, or saved the schedule or automation that starts it. */
  creatorUid: string;
  /** The agent identity the run executes as, if any. */
  agentUid: string | null;
  environmentId: string | null;
}

/** The names among `names` granted to the run's creator, its executing agent or its environment. */
export async function grantedNames(db: Kysely<DB>, user: SecretUser, names: string[]): Promise<Set<string>> {
  const rows = await db
    .selectFrom('secret_grants')
    .select('secret_name')
    .distinct()
    .where('team_uid', '=', user.teamUid)
    .where('secret_name', 'in', names)
    .where((eb) =>
      eb.or([
        eb.and([eb('grantee_type', '=', 'member'), eb('grantee_uid', '=', user.creatorUid)]),
        ...(user.agentUid ? [eb.and([eb('grantee_type', '=', 'agent'), eb('grantee_uid', '=', user.agentUid)])] : []),
        ...(user.environmentId
          ? [eb.and([eb('grantee_type', '=', 'environment'), eb('grantee_uid', '=', user.environmentId)])]
          : []),
      ]),
    )
    .execute();
  return new Set(rows.map((row) => row.secret_name));
}
