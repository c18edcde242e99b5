import { type Kysely, type SqlBool, sql } from 'kysely';
import type { DB } from '../database.js';
import { apiKeyDisplayPrefix, hashApiKey, newUid } from '../platform/crypto.js';

export type Role = 'admin' | 'member';

export interface Membership {
  team_uid: string;
  role: Role;
}

/** Who is calling: read from the database on every request (no cache, so a revoked key stops at once). */
export interface Principal {
  /** `service_account` for an agent identity's key. */
  type: 'user' | 'service_account';
  uid: string;
  displayName: string;
  email: string | null;
  /** Instance administrator (the admin API). Never true for agents. */
  isAdmin: boolean;
  memberships: Membership[];
  /** Agents only: within the team's plan limit, so it may execute runs. */
  available?: boolean;
  /** The UID of the API key the request came with (for the audit log). */
  keyUid?: string;
}

/**
 * The principals of many API keys (by their hashes) in one statement; keys that are unknown or revoked are
 * missing from the map. Concurrent requests look their keys up together (see ApiKeyAuthenticator).
 */
export async function findPrincipalsByKeyHashes(
  db: Kysely<DB>,
  keyHashes: string[],
  planMaxAgents: number,
): Promise<Map<string, Principal>> {
  const rows = await db
    .selectFrom('api_keys as k')
    .leftJoin('users as u', 'u.uid', 'k.user_uid')
    .leftJoin('agent_identities as a', 'a.uid', 'k.agent_uid')
    .select([
      'k.key_hash',
      'k.uid as key_uid',
      'k.user_uid',
      'k.agent_uid',
      'u.display_name',
      'u.email',
      'u.is_admin',
      'a.name as agent_name',
      'a.team_uid as agent_team_uid',
      sql<string>`(SELECT count(*) FROM agent_identities older
        WHERE older.team_uid = a.team_uid AND (older.created_at, older.uid) < (a.created_at, a.uid))`.as(
        'older_agents',
      ),
      sql<Membership[]>`coalesce((SELECT json_agg(json_build_object('team_uid', m.team_uid, 'role', m.role))
        FROM team_members m WHERE m.user_uid = k.user_uid), '[]')`.as('memberships'),
    ])
    .where(sql<SqlBool>`k.key_hash = ANY(${keyHashes}::text[])`)
    .where('k.revoked_at', 'is', null)
    .execute();
  const principals = new Map<string, Principal>();
  for (const row of rows) {
    if (row.agent_uid && row.agent_team_uid) {
      principals.set(row.key_hash, {
        type: 'service_account',
        uid: row.agent_uid,
        displayName: row.agent_name ?? row.agent_uid,
        email: null,
        isAdmin: false,
        memberships: [{ team_uid: row.agent_team_uid, role: 'member' }],
        available: Number(row.older_agents) < planMaxAgents,
        keyUid: row.key_uid,
      });
    } else if (row.user_uid) {
      principals.set(row.key_hash, {
        type: 'user',
        uid: row.user_uid,
        displayName: row.display_name ?? row.user_uid,
        email: row.email ?? null,
        isAdmin: row.is_admin ?? false,
        memberships: row.memberships,
        keyUid: row.key_uid,
      });
    }
  }
  return principals;
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

export type KeyOwner = { userUid: string } | { agentUid: string };

/** Stores a key by its hash only; the caller holds the only copy of the key itself. */
export async function insertApiKey(db: Kysely<DB>, owner: KeyOwner, key: string, name: string): Promise<string> {
  const uid = newUid();
  await db
    .insertInto('api_keys')
    .values({
      uid,
      key_hash: hashApiKey(key),
      display_prefix: apiKeyDisplayPrefix(key),
      name,
      user_uid: 'userUid' in owner ? owner.userUid : null,
      agent_uid: 'agentUid' in owner ? owner.agentUid : null,
    })
    .execute();
  return uid;
}

export async function countTeams(db: Kysely<DB>): Promise<number> {
  const row = await db
    .selectFrom('teams')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** The user's role in the team now, or undefined when they are not a member (an agent's uid is not). */
/** A member of the team by user ID or e-mail (any case): whom an agent's run may be created on behalf of. */
export async function findTeamMember(
  db: Kysely<DB>,
  teamUid: string,
  userIdOrEmail: string,
): Promise<{ uid: string } | undefined> {
  return db
    .selectFrom('team_members')
    .innerJoin('users', 'users.uid', 'team_members.user_uid')
    .select('users.uid')
    .where('team_members.team_uid', '=', teamUid)
    .where((eb) =>
      eb.or([
        eb('users.uid', '=', userIdOrEmail),
        eb(eb.fn('lower', ['users.email']), '=', userIdOrEmail.toLowerCase()),
      ]),
    )
    .orderBy('users.uid')
    .executeTakeFirst();
}

export async function roleInTeam(db: Kysely<DB>, teamUid: string, userUid: string): Promise<Role | undefined> {
  const row = await db
    .selectFrom('team_members')
    .select('role')
    .where('team_uid', '=', teamUid)
    .where('user_uid', '=', userUid)
    .executeTakeFirst();
  return row?.role;
}
