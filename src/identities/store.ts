import { sql, type Kysely } from 'kysely';
import { apiKeyDisplayPrefix, hashApiKey, newUid } from '../platform/crypto.js';
import type { DB } from '../platform/db/schema.js';

export type Role = 'admin' | 'member';

export interface Membership {
  team_uid: string;
  role: Role;
}

/** Who is calling: resolved from an API key on every request (no cache, so a revoked key stops at once). */
export interface Principal {
  type: 'user' | 'service_account';
  uid: string;
  displayName: string;
  email: string | null;
  isAdmin: boolean;
  memberships: Membership[];
}

export async function findPrincipalByApiKey(db: Kysely<DB>, key: string): Promise<Principal | null> {
  const row = await db
    .selectFrom('api_keys as k')
    .innerJoin('users as u', 'u.uid', 'k.user_uid')
    .leftJoin('team_members as m', 'm.user_uid', 'u.uid')
    .select([
      'u.uid',
      'u.display_name',
      'u.email',
      'u.is_admin',
      sql<Membership[]>`coalesce(json_agg(json_build_object('team_uid', m.team_uid, 'role', m.role))
        FILTER (WHERE m.team_uid IS NOT NULL), '[]')`.as('memberships'),
    ])
    .where('k.key_hash', '=', hashApiKey(key))
    .where('k.revoked_at', 'is', null)
    .groupBy(['k.uid', 'u.uid'])
    .executeTakeFirst();
  if (!row) return null;
  return {
    type: 'user',
    uid: row.uid,
    displayName: row.display_name,
    email: row.email,
    isAdmin: row.is_admin,
    memberships: row.memberships,
  };
}

export async function insertTeam(db: Kysely<DB>, name: string): Promise<string> {
  const uid = newUid();
  await db.insertInto('teams').values({ uid, name }).execute();
  return uid;
}

export async function insertUser(
  db: Kysely<DB>,
  user: { displayName: string; email?: string | null; isAdmin?: boolean },
): Promise<string> {
  const uid = newUid();
  await db
    .insertInto('users')
    .values({ uid, display_name: user.displayName, email: user.email ?? null, is_admin: user.isAdmin ?? false })
    .execute();
  return uid;
}

export async function insertMembership(db: Kysely<DB>, teamUid: string, userUid: string, role: Role): Promise<void> {
  await db.insertInto('team_members').values({ team_uid: teamUid, user_uid: userUid, role }).execute();
}

/** Stores a key by its hash only; the caller holds the only copy of the key itself. */
export async function insertApiKey(db: Kysely<DB>, userUid: string, key: string, name: string): Promise<string> {
  const uid = newUid();
  await db
    .insertInto('api_keys')
    .values({ uid, key_hash: hashApiKey(key), display_prefix: apiKeyDisplayPrefix(key), name, user_uid: userUid })
    .execute();
  return uid;
}

export async function countTeams(db: Kysely<DB>): Promise<number> {
  const row = await db.selectFrom('teams').select((eb) => eb.fn.countAll<string>().as('count')).executeTakeFirstOrThrow();
  return Number(row.count);
}

export async function findUserProfiles(
  db: Kysely<DB>,
  uids: string[],
): Promise<Map<string, { display_name: string; email: string | null }>> {
  if (uids.length === 0) return new Map();
  const rows = await db.selectFrom('users').select(['uid', 'display_name', 'email']).where('uid', 'in', uids).execute();
  return new Map(rows.map((row) => [row.uid, row]));
}
