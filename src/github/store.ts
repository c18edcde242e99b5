import type { Kysely } from 'kysely';
import type { DB } from '../database.js';

export interface GitHubLink {
  installation_id: number | null;
  account_login: string | null;
  token_secret: string | null;
  created_at: Date;
}

export async function links(db: Kysely<DB>, teamUid: string): Promise<GitHubLink[]> {
  const rows = await db
    .selectFrom('github_links')
    .select(['installation_id', 'account_login', 'token_secret', 'created_at'])
    .where('team_uid', '=', teamUid)
    .orderBy('id')
    .execute();
  return rows.map((row) => ({
    ...row,
    installation_id: row.installation_id === null ? null : Number(row.installation_id),
  }));
}

/** Links an installation (again: the account is refreshed). */
export async function linkInstallation(
  db: Kysely<DB>,
  teamUid: string,
  installationId: number,
  accountLogin: string,
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx
      .deleteFrom('github_links')
      .where('team_uid', '=', teamUid)
      .where('installation_id', '=', String(installationId) as never)
      .execute();
    await trx
      .insertInto('github_links')
      .values({ team_uid: teamUid, installation_id: installationId, account_login: accountLogin })
      .execute();
  });
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

export async function unlinkInstallation(db: Kysely<DB>, teamUid: string, installationId: number): Promise<boolean> {
  const result = await db
    .deleteFrom('github_links')
    .where('team_uid', '=', teamUid)
    .where('installation_id', '=', String(installationId) as never)
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
