import { type Kysely, sql } from 'kysely';
import type { DB } from '../../database.js';
import { generateApiKey } from '../../platform/crypto.js';
import { withConflicts } from '../../platform/db/conflicts.js';
import { conflict, invalidRequest, notFound } from '../../platform/http/errors.js';
import { rfc3339 as iso } from '../../platform/time.js';
import { insertApiKey, insertMembership, insertTeam, insertUser, type Role } from '../store.js';
import type { CreateKeyBody, CreateUserBody, KeyListQuery } from './schemas.js';

/** Instance administration: teams, users, memberships and API keys. Callers are instance administrators. */
export class AdminService {
  constructor(private readonly options: { db: Kysely<DB> }) {}

  private get db() {
    return this.options.db;
  }

  async createTeam(name: string) {
    const trimmed = name.trim();
    if (trimmed === '') throw invalidRequest('name must not be blank');
    const uid = await withConflicts(insertTeam(this.db, trimmed), {
      teams_name_key: () => conflict(`a team named "${trimmed}" already exists`),
    });
    const row = await this.db.selectFrom('teams').selectAll().where('uid', '=', uid).executeTakeFirstOrThrow();
    return { uid: row.uid, name: row.name, created_at: iso(row.created_at) };
  }

  async listTeams() {
    const rows = await this.db.selectFrom('teams').selectAll().orderBy('name').execute();
    return { teams: rows.map((row) => ({ uid: row.uid, name: row.name, created_at: iso(row.created_at) })) };
  }

  async createUser(body: CreateUserBody) {
    const uid = await withConflicts(
      insertUser(this.db, {
        displayName: body.display_name.trim(),
        email: body.email ?? null,
        isAdmin: body.is_admin ?? false,
      }),
      { users_email_key: () => conflict(`a user with email ${body.email} already exists`) },
    );
    return this.user(uid);
  }

  private async user(uid: string) {
    const row = await this.db.selectFrom('users').selectAll().where('uid', '=', uid).executeTakeFirst();
    if (!row) throw notFound(`user ${uid} not found`);
    return {
      uid: row.uid,
      display_name: row.display_name,
      ...(row.email ? { email: row.email } : {}),
      is_admin: row.is_admin,
      created_at: iso(row.created_at),
    };
  }

  async listUsers() {
    const rows = await this.db.selectFrom('users').select('uid').orderBy('display_name').orderBy('uid').execute();
    return { users: await Promise.all(rows.map((row) => this.user(row.uid))) };
  }

  private async requireTeam(teamUid: string): Promise<void> {
    if (!(await this.db.selectFrom('teams').select('uid').where('uid', '=', teamUid).executeTakeFirst())) {
      throw notFound(`team ${teamUid} not found`);
    }
  }

  async listMembers(teamUid: string) {
    await this.requireTeam(teamUid);
    const rows = await this.db
      .selectFrom('team_members as m')
      .innerJoin('users as u', 'u.uid', 'm.user_uid')
      .select(['m.team_uid', 'm.user_uid', 'u.display_name', 'u.email', 'm.role', 'm.created_at'])
      .where('m.team_uid', '=', teamUid)
      .orderBy('u.display_name')
      .execute();
    return {
      members: rows.map((row) => ({ ...row, email: row.email ?? undefined, created_at: iso(row.created_at) })),
    };
  }

  /** Adds the user to the team, or changes their role there. */
  async setMember(teamUid: string, userUid: string, role: Role) {
    await this.requireTeam(teamUid);
    await this.user(userUid);
    const existing = await this.db
      .updateTable('team_members')
      .set({ role })
      .where('team_uid', '=', teamUid)
      .where('user_uid', '=', userUid)
      .executeTakeFirst();
    if (Number(existing.numUpdatedRows) === 0) await insertMembership(this.db, teamUid, userUid, role);
    const { members } = await this.listMembers(teamUid);
    return members.find((member) => member.user_uid === userUid)!;
  }

  async removeMember(teamUid: string, userUid: string): Promise<void> {
    const result = await this.db
      .deleteFrom('team_members')
      .where('team_uid', '=', teamUid)
      .where('user_uid', '=', userUid)
      .executeTakeFirst();
    if (Number(result.numDeletedRows) === 0) throw notFound(`user ${userUid} is not a member of team ${teamUid}`);
  }

  async createKey(body: CreateKeyBody) {
    if ((body.user_uid === undefined) === (body.agent_uid === undefined))
      throw invalidRequest('give exactly one of user_uid and agent_uid');
    if (body.user_uid !== undefined) await this.user(body.user_uid);
    if (
      body.agent_uid !== undefined &&
      !(await this.db.selectFrom('agent_identities').select('uid').where('uid', '=', body.agent_uid).executeTakeFirst())
    ) {
      throw notFound(`agent identity ${body.agent_uid} not found`);
    }
    const key = generateApiKey();
    const uid = await insertApiKey(
      this.db,
      body.user_uid !== undefined ? { userUid: body.user_uid } : { agentUid: body.agent_uid! },
      key,
      body.name,
    );
    const [created] = (await this.listKeys({}, uid)).api_keys;
    return { ...created!, key };
  }

  async listKeys(query: KeyListQuery, uid?: string) {
    let select = this.db
      .selectFrom('api_keys')
      .select(['uid', 'name', 'display_prefix', 'user_uid', 'agent_uid', 'created_at', 'revoked_at']);
    if (uid !== undefined) select = select.where('uid', '=', uid);
    if (query.user_uid !== undefined) select = select.where('user_uid', '=', query.user_uid);
    if (query.agent_uid !== undefined) select = select.where('agent_uid', '=', query.agent_uid);
    const rows = await select.orderBy('created_at').orderBy('uid').execute();
    return {
      api_keys: rows.map((row) => ({
        uid: row.uid,
        name: row.name,
        display_prefix: row.display_prefix,
        ...(row.user_uid ? { user_uid: row.user_uid } : {}),
        ...(row.agent_uid ? { agent_uid: row.agent_uid } : {}),
        created_at: iso(row.created_at),
        ...(row.revoked_at ? { revoked_at: iso(row.revoked_at) } : {}),
      })),
    };
  }

  /** Revocation is a committed row change and keys are looked up on every request, so it holds everywhere at once. */
  async revokeKey(uid: string): Promise<void> {
    const result = await this.db
      .updateTable('api_keys')
      .set({ revoked_at: sql`coalesce(revoked_at, clock_timestamp())` })
      .where('uid', '=', uid)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) === 0) throw notFound(`API key ${uid} not found`);
  }
}
