import { type Kysely, sql } from 'kysely';
import type { DB } from '../database.js';

export interface AuditEntry {
  teamUid: string | null;
  actorType: string;
  actorUid: string;
  keyUid: string | null;
  clientAddress: string | null;
  action: string;
  target: string | null;
  details: Record<string, unknown>;
}

export interface AuditRow {
  id: string;
  at: Date;
  team_uid: string | null;
  actor_type: string;
  actor_uid: string;
  key_uid: string | null;
  client_address: string | null;
  action: string;
  target: string | null;
  details: Record<string, unknown>;
}

export async function insertEntry(db: Kysely<DB>, entry: AuditEntry): Promise<void> {
  await db
    .insertInto('audit_log')
    .values({
      team_uid: entry.teamUid,
      actor_type: entry.actorType,
      actor_uid: entry.actorUid,
      key_uid: entry.keyUid,
      client_address: entry.clientAddress,
      action: entry.action,
      target: entry.target,
      details: JSON.stringify(entry.details),
    })
    .execute();
}

/** A page of entries, newest first, after the entry `before` (exclusive); `teamUid` undefined: every team's. */
export async function listEntries(
  db: Kysely<DB>,
  filter: { teamUid?: string; action?: string; before?: string },
  limit: number,
): Promise<AuditRow[]> {
  let query = db
    .selectFrom('audit_log')
    .select([
      sql<string>`id::text`.as('id'),
      'at',
      'team_uid',
      'actor_type',
      'actor_uid',
      'key_uid',
      'client_address',
      'action',
      'target',
      'details',
    ])
    // The table's id, not the text of the same name selected above (ORDER BY prefers an output column).
    .orderBy('audit_log.id', 'desc')
    .limit(limit);
  if (filter.teamUid !== undefined) query = query.where('team_uid', '=', filter.teamUid);
  if (filter.action !== undefined) query = query.where('action', '=', filter.action);
  if (filter.before !== undefined) query = query.where('audit_log.id', '<', filter.before);
  return (await query.execute()) as unknown as AuditRow[];
}

/** Deletes up to `batch` entries older than the cutoff; the number deleted. */
export async function pruneEntries(db: Kysely<DB>, olderThan: Date, batch: number): Promise<number> {
  const result = await sql`DELETE FROM audit_log WHERE id IN (
      SELECT id FROM audit_log WHERE at < ${olderThan} ORDER BY at LIMIT ${batch})`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}
