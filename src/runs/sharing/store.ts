// The queries of runs' share links (migration 0047). A link is found by the hash of its secret only; the run it
// opens comes from the link's row, never from the request, so a link reaches its own run and nothing else.
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DB } from '../../database.js';
import { generateShareSecret, hashShareSecret } from './secret.js';

export interface ShareLinkRow {
  id: string;
  run_id: string;
  team_uid: string;
  public_access: 'VIEWER' | 'EDITOR';
  created_by_type: string;
  created_by_uid: string;
  created_at: Date;
}

const COLUMNS = [
  'id',
  'run_id',
  'team_uid',
  'public_access',
  'created_by_type',
  'created_by_uid',
  'created_at',
] as const;

/**
 * Makes the run's link, revoking the one it had in the same transaction (one active link per run): answers the new
 * row and its secret, which is kept nowhere but in the answer.
 */
export async function replaceLink(
  db: Kysely<DB>,
  link: {
    runId: string;
    teamUid: string;
    access: 'VIEWER' | 'EDITOR';
    by: { type: string; uid: string };
  },
): Promise<{ row: ShareLinkRow; secret: string }> {
  const secret = generateShareSecret();
  const row = await db.transaction().execute(async (trx) => {
    await trx
      .updateTable('run_share_links')
      .set({ revoked_at: new Date(), revoked_by_uid: link.by.uid })
      .where('run_id', '=', link.runId)
      .where('revoked_at', 'is', null)
      .execute();
    return trx
      .insertInto('run_share_links')
      .values({
        id: randomUUID(),
        run_id: link.runId,
        team_uid: link.teamUid,
        public_access: link.access,
        secret_hash: hashShareSecret(secret),
        created_by_type: link.by.type,
        created_by_uid: link.by.uid,
      })
      .returning(COLUMNS)
      .executeTakeFirstOrThrow();
  });
  return { row, secret };
}

/** The run's active link, if it has one. */
export async function activeLink(db: Kysely<DB>, runId: string): Promise<ShareLinkRow | undefined> {
  return db
    .selectFrom('run_share_links')
    .select(COLUMNS)
    .where('run_id', '=', runId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
}

/** Revokes the run's active link; answers it, or undefined when the run had none. */
export async function revokeLink(db: Kysely<DB>, runId: string, byUid: string): Promise<ShareLinkRow | undefined> {
  return db
    .updateTable('run_share_links')
    .set({ revoked_at: new Date(), revoked_by_uid: byUid })
    .where('run_id', '=', runId)
    .where('revoked_at', 'is', null)
    .returning(COLUMNS)
    .executeTakeFirst();
}

/** The active link whose secret this is, with its run's owner; undefined for a wrong, revoked or orphaned secret. */
export async function linkBySecret(
  db: Kysely<DB>,
  secret: string,
): Promise<(ShareLinkRow & { creator_uid: string; creator_type: string }) | undefined> {
  return (
    db
      .selectFrom('run_share_links')
      .innerJoin('runs', 'runs.id', 'run_share_links.run_id')
      .select([
        'run_share_links.id',
        'run_share_links.run_id',
        'run_share_links.team_uid',
        'run_share_links.public_access',
        'run_share_links.created_by_type',
        'run_share_links.created_by_uid',
        'run_share_links.created_at',
        'runs.creator_uid',
        'runs.creator_type',
      ])
      .where('run_share_links.secret_hash', '=', hashShareSecret(secret))
      .where('run_share_links.revoked_at', 'is', null)
      // The link's team is the run's: a row that said otherwise opens nothing.
      .whereRef('runs.team_uid', '=', 'run_share_links.team_uid')
      .executeTakeFirst()
  );
}
