import { type ExpressionBuilder, type Kysely, type RawBuilder, sql } from 'kysely';
import type { DB } from '../database.js';
import type { AccessKind, EnvironmentConfig } from './schemas.js';

export interface EnvironmentRow {
  uid: string;
  team_uid: string;
  /** As stored; storedConfig() gives it today's shape. */
  config: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
  setup_failed: boolean;
  creator_type: 'user' | 'service_account' | null;
  creator_uid: string | null;
  creator_profile: { display_name?: string; email?: string | null } | null;
  last_editor_type: 'user' | 'service_account' | null;
  last_editor_uid: string | null;
  last_editor_profile: { display_name?: string; email?: string | null } | null;
  link_active: boolean;
  /** How the team that asked reaches it. */
  access: AccessKind;
}

export interface GuestRow {
  team_uid: string;
  team_name: string;
  via: 'guest' | 'link';
  created_at: Date;
}

/** Owned by the team, or shared with it as a guest or through the link. The one access rule. */
function accessibleTo(eb: ExpressionBuilder<DB, 'environments'>, teamUid: string) {
  return eb.or([
    eb('environments.team_uid', '=', teamUid),
    eb.exists(
      eb
        .selectFrom('environment_access')
        .select('environment_access.team_uid')
        .whereRef('environment_access.environment_uid', '=', 'environments.uid')
        .where('environment_access.team_uid', '=', teamUid),
    ),
  ]);
}

export async function isAccessible(db: Kysely<DB>, teamUid: string, uid: string): Promise<boolean> {
  const row = await db
    .selectFrom('environments')
    .select('uid')
    .where('uid', '=', uid)
    .where((eb) => accessibleTo(eb, teamUid))
    .executeTakeFirst();
  return row !== undefined;
}

/** A principal's name (and a person's e-mail): a user, else an agent identity. */
function profileOf(uid: RawBuilder<unknown>) {
  return sql<EnvironmentRow['creator_profile']>`coalesce(
    (SELECT json_build_object('display_name', u.display_name, 'email', u.email) FROM users u WHERE u.uid = ${uid}),
    (SELECT json_build_object('display_name', ai.name) FROM agent_identities ai WHERE ai.uid = ${uid}))`;
}

function selectAccessible(db: Kysely<DB>, teamUid: string) {
  return db
    .selectFrom('environments')
    .select([
      'environments.uid',
      'environments.team_uid',
      'environments.config',
      'environments.created_at',
      'environments.updated_at',
      'environments.setup_failed',
      'environments.creator_type',
      'environments.creator_uid',
      sql<boolean>`environments.share_token_hash IS NOT NULL`.as('link_active'),
      sql<AccessKind>`CASE WHEN environments.team_uid = ${teamUid} THEN 'owner' ELSE (
        SELECT via FROM environment_access
        WHERE environment_uid = environments.uid AND environment_access.team_uid = ${teamUid}) END`.as('access'),
      profileOf(sql.ref('environments.creator_uid')).as('creator_profile'),
      'environments.last_editor_type',
      'environments.last_editor_uid',
      profileOf(sql.ref('environments.last_editor_uid')).as('last_editor_profile'),
    ])
    .where((eb) => accessibleTo(eb, teamUid));
}

export async function listAccessible(
  db: Kysely<DB>,
  teamUid: string,
  sortBy: 'name' | 'last_updated',
): Promise<EnvironmentRow[]> {
  let query = selectAccessible(db, teamUid);
  // "C" collation: the same alphabetical order on every PostgreSQL, whatever its locale.
  query =
    sortBy === 'name'
      ? query
          .orderBy(sql`lower(environments.config->>'name') COLLATE "C"`)
          .orderBy(sql`environments.config->>'name' COLLATE "C"`)
      : query.orderBy('environments.updated_at', 'desc');
  return (await query.orderBy('environments.uid').execute()) as EnvironmentRow[];
}

export async function findAccessible(
  db: Kysely<DB>,
  teamUid: string,
  uid: string,
): Promise<EnvironmentRow | undefined> {
  return (await selectAccessible(db, teamUid).where('environments.uid', '=', uid).executeTakeFirst()) as
    | EnvironmentRow
    | undefined;
}

export async function insertEnvironment(
  db: Kysely<DB>,
  environment: {
    uid: string;
    teamUid: string;
    config: EnvironmentConfig;
    creator: { type: 'user' | 'service_account'; uid: string };
  },
): Promise<void> {
  await db
    .insertInto('environments')
    .values({
      uid: environment.uid,
      team_uid: environment.teamUid,
      config: JSON.stringify(environment.config),
      creator_type: environment.creator.type,
      creator_uid: environment.creator.uid,
      last_editor_type: environment.creator.type,
      last_editor_uid: environment.creator.uid,
    })
    .execute();
}

/** Replaces the config, recording who did; a new config has not failed its setup yet. */
export async function updateConfig(
  db: Kysely<DB>,
  ownerTeamUid: string,
  uid: string,
  config: EnvironmentConfig,
  editor: { type: 'user' | 'service_account'; uid: string },
): Promise<void> {
  await db
    .updateTable('environments')
    .set({
      config: JSON.stringify(config),
      setup_failed: false,
      updated_at: sql`clock_timestamp()`,
      last_editor_type: editor.type,
      last_editor_uid: editor.uid,
    })
    .where('uid', '=', uid)
    .where('team_uid', '=', ownerTeamUid)
    .execute();
}

export async function deleteEnvironment(db: Kysely<DB>, ownerTeamUid: string, uid: string): Promise<void> {
  await db.deleteFrom('environments').where('uid', '=', uid).where('team_uid', '=', ownerTeamUid).execute();
}

export async function listGuests(db: Kysely<DB>, uid: string): Promise<GuestRow[]> {
  return db
    .selectFrom('environment_access')
    .innerJoin('teams', 'teams.uid', 'environment_access.team_uid')
    .select([
      'environment_access.team_uid',
      'teams.name as team_name',
      'environment_access.via',
      'environment_access.created_at',
    ])
    .where('environment_access.environment_uid', '=', uid)
    .orderBy('environment_access.created_at')
    .orderBy('environment_access.team_uid')
    .execute();
}

/**
 * Gives a team access. A guest grant upgrades a link grant (it survives the link being replaced); a link grant
 * never downgrades a guest. Returns false when the team does not exist.
 */
export async function grantAccess(
  db: Kysely<DB>,
  uid: string,
  teamUid: string,
  via: 'guest' | 'link',
): Promise<boolean> {
  const result = await db
    .insertInto('environment_access')
    .columns(['environment_uid', 'team_uid', 'via'])
    .expression((eb) =>
      eb
        .selectFrom('teams')
        .select([sql.val(uid).as('environment_uid'), 'teams.uid', sql.val(via).as('via')])
        .where('teams.uid', '=', teamUid),
    )
    .onConflict((oc) =>
      oc.columns(['environment_uid', 'team_uid']).doUpdateSet({
        via: sql`CASE WHEN excluded.via = 'guest' THEN 'guest' ELSE environment_access.via END`,
      }),
    )
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
}

export async function revokeAccess(db: Kysely<DB>, uid: string, teamUid: string): Promise<boolean> {
  const result = await db
    .deleteFrom('environment_access')
    .where('environment_uid', '=', uid)
    .where('team_uid', '=', teamUid)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** How a team that is not the owner reaches an environment, and whether its admins let its runs there use its secrets. */
export interface GuestAccessRow {
  owner_team_uid: string;
  via: 'guest' | 'link';
  secrets_allowed_at: Date | null;
  secrets_allowed_by: string | null;
}

/** The guest access of `teamUid` to the environment; undefined when the team owns it or cannot reach it. */
export async function guestAccess(db: Kysely<DB>, teamUid: string, uid: string): Promise<GuestAccessRow | undefined> {
  return db
    .selectFrom('environment_access')
    .innerJoin('environments', 'environments.uid', 'environment_access.environment_uid')
    .select([
      'environments.team_uid as owner_team_uid',
      'environment_access.via',
      'environment_access.secrets_allowed_at',
      'environment_access.secrets_allowed_by',
    ])
    .where('environment_access.environment_uid', '=', uid)
    .where('environment_access.team_uid', '=', teamUid)
    .where('environments.team_uid', '<>', teamUid)
    .executeTakeFirst();
}

/** Records (or clears, with `by` null) a guest team's consent to its secrets in the environment; false without access. */
export async function setSecretsAllowed(
  db: Kysely<DB>,
  uid: string,
  teamUid: string,
  by: string | null,
): Promise<boolean> {
  const result = await db
    .updateTable('environment_access')
    .set({ secrets_allowed_at: by === null ? null : sql<Date>`clock_timestamp()`, secrets_allowed_by: by })
    .where('environment_uid', '=', uid)
    .where('team_uid', '=', teamUid)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function setShareTokenHash(db: Kysely<DB>, uid: string, tokenHash: string): Promise<void> {
  await db.updateTable('environments').set({ share_token_hash: tokenHash }).where('uid', '=', uid).execute();
}

export async function findByShareTokenHash(
  db: Kysely<DB>,
  tokenHash: string,
): Promise<{ uid: string; team_uid: string } | undefined> {
  return db
    .selectFrom('environments')
    .select(['uid', 'team_uid'])
    .where('share_token_hash', '=', tokenHash)
    .executeTakeFirst();
}

/** The stored config of an environment the team can reach, for preparing a run's workspace. */
export async function configForRun(
  db: Kysely<DB>,
  teamUid: string,
  uid: string,
): Promise<Record<string, unknown> | undefined> {
  const row = await db
    .selectFrom('environments')
    .select('config')
    .where('uid', '=', uid)
    .where((eb) => accessibleTo(eb, teamUid))
    .executeTakeFirst();
  return row?.config;
}

export async function setSetupFailed(db: Kysely<DB>, uid: string, failed: boolean): Promise<void> {
  await db
    .updateTable('environments')
    .set({ setup_failed: failed })
    .where('uid', '=', uid)
    .where('setup_failed', '<>', failed)
    .execute();
}

/** The team's own environments, oldest first, with their configs and creators. */
export async function listOwnedOldestFirst(
  db: Kysely<DB>,
  teamUid: string,
): Promise<Array<Pick<EnvironmentRow, 'uid' | 'config' | 'creator_type' | 'creator_uid'>>> {
  return (await db
    .selectFrom('environments')
    .select(['uid', 'config', 'creator_type', 'creator_uid'])
    .where('team_uid', '=', teamUid)
    .orderBy('created_at')
    .execute()) as Array<Pick<EnvironmentRow, 'uid' | 'config' | 'creator_type' | 'creator_uid'>>;
}
