import type { Kysely } from 'kysely';
import type { DB } from '../database.js';
import { insertUser } from '../identities/index.js';

export interface GitHubLink {
  installation_id: number | null;
  account_login: string | null;
  token_secret: string | null;
  service_user_uid: string | null;
  created_at: Date;
}

export async function links(db: Kysely<DB>, teamUid: string): Promise<GitHubLink[]> {
  const rows = await db
    .selectFrom('github_links')
    .select(['installation_id', 'account_login', 'token_secret', 'service_user_uid', 'created_at'])
    .where('team_uid', '=', teamUid)
    .orderBy('id')
    .execute();
  return rows.map((row) => ({
    ...row,
    installation_id: row.installation_id === null ? null : Number(row.installation_id),
  }));
}

/** Links an installation (again: the account is refreshed, the service identity and the allow-list stay). */
export async function linkInstallation(
  db: Kysely<DB>,
  teamUid: string,
  installationId: number,
  accountLogin: string,
): Promise<void> {
  await db
    .insertInto('github_links')
    .values({ team_uid: teamUid, installation_id: installationId, account_login: accountLogin })
    .onConflict((oc) =>
      oc
        .columns(['team_uid', 'installation_id'])
        .where('installation_id', 'is not', null)
        .doUpdateSet({ account_login: accountLogin }),
    )
    .execute();
}

export async function setTokenSecret(db: Kysely<DB>, teamUid: string, secretName: string): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx
      .deleteFrom('github_links')
      .where('team_uid', '=', teamUid)
      .where('token_secret', 'is not', null)
      .execute();
    await trx.insertInto('github_links').values({ team_uid: teamUid, token_secret: secretName }).execute();
  });
}

/** Unlinks an installation, with its allow-list (a later link starts from none). */
export async function unlinkInstallation(db: Kysely<DB>, teamUid: string, installationId: number): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const result = await trx
      .deleteFrom('github_links')
      .where('team_uid', '=', teamUid)
      .where('installation_id', '=', String(installationId) as never)
      .executeTakeFirst();
    await trx
      .deleteFrom('github_allowed_logins')
      .where('team_uid', '=', teamUid)
      .where('installation_id', '=', String(installationId) as never)
      .execute();
    return Number(result.numDeletedRows) > 0;
  });
}

/** Whether the team links the installation. */
export async function linksInstallation(db: Kysely<DB>, teamUid: string, installationId: number): Promise<boolean> {
  const row = await db
    .selectFrom('github_links')
    .select('id')
    .where('team_uid', '=', teamUid)
    .where('installation_id', '=', String(installationId) as never)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * The installation link's service identity: the principal its runs are created as when the GitHub user maps to no
 * Hangar user. Made on first use (links made before it existed have none), in one transaction that holds the link's
 * row, so replicas agree on one. A users row with no membership, no API key and no grant: a run it creates may use
 * only the secrets granted to the run's environment (or agent identity). undefined when the team does not link it.
 */
export async function ensureServiceUser(
  db: Kysely<DB>,
  teamUid: string,
  installationId: number,
): Promise<string | undefined> {
  return db.transaction().execute(async (trx) => {
    const link = await trx
      .selectFrom('github_links')
      .select(['id', 'service_user_uid', 'account_login'])
      .where('team_uid', '=', teamUid)
      .where('installation_id', '=', String(installationId) as never)
      .forUpdate()
      .executeTakeFirst();
    if (!link) return undefined;
    if (link.service_user_uid) return link.service_user_uid;
    const uid = await insertUser(trx, { displayName: `GitHub ${link.account_login} (installation ${installationId})` });
    await trx.updateTable('github_links').set({ service_user_uid: uid }).where('id', '=', link.id).execute();
    return uid;
  });
}

export interface AllowedLogin {
  login: string;
  user_uid: string;
  created_at: Date;
}

export async function allowedLogins(db: Kysely<DB>, teamUid: string, installationId: number): Promise<AllowedLogin[]> {
  return db
    .selectFrom('github_allowed_logins')
    .select(['login', 'user_uid', 'created_at'])
    .where('team_uid', '=', teamUid)
    .where('installation_id', '=', String(installationId) as never)
    .orderBy('login')
    .execute();
}

/** The Hangar user a GitHub login (any case) maps to on the team's link, if it is listed. */
export async function allowedUser(
  db: Kysely<DB>,
  teamUid: string,
  installationId: number,
  login: string,
): Promise<string | undefined> {
  const row = await db
    .selectFrom('github_allowed_logins')
    .select('user_uid')
    .where('team_uid', '=', teamUid)
    .where('installation_id', '=', String(installationId) as never)
    .where('login', '=', login.toLowerCase())
    .executeTakeFirst();
  return row?.user_uid;
}

/** The GitHub login a Hangar user is mapped to on the team's link (its allow-list), if any: their GitHub identity. */
export async function loginOfUser(
  db: Kysely<DB>,
  teamUid: string,
  installationId: number,
  userUid: string,
): Promise<string | undefined> {
  const row = await db
    .selectFrom('github_allowed_logins')
    .select('login')
    .where('team_uid', '=', teamUid)
    .where('installation_id', '=', String(installationId) as never)
    .where('user_uid', '=', userUid)
    .orderBy('login')
    .executeTakeFirst();
  return row?.login;
}

export async function allowLogin(
  db: Kysely<DB>,
  teamUid: string,
  installationId: number,
  login: string,
  userUid: string,
): Promise<void> {
  await db
    .insertInto('github_allowed_logins')
    .values({ team_uid: teamUid, installation_id: installationId, login: login.toLowerCase(), user_uid: userUid })
    .onConflict((oc) => oc.columns(['team_uid', 'installation_id', 'login']).doUpdateSet({ user_uid: userUid }))
    .execute();
}

export async function disallowLogin(
  db: Kysely<DB>,
  teamUid: string,
  installationId: number,
  login: string,
): Promise<boolean> {
  const result = await db
    .deleteFrom('github_allowed_logins')
    .where('team_uid', '=', teamUid)
    .where('installation_id', '=', String(installationId) as never)
    .where('login', '=', login.toLowerCase())
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export async function clearTokenSecret(db: Kysely<DB>, teamUid: string): Promise<boolean> {
  const result = await db
    .deleteFrom('github_links')
    .where('team_uid', '=', teamUid)
    .where('token_secret', 'is not', null)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
