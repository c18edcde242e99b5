import { type Kysely, sql } from 'kysely';
import type { DB } from '../database.js';

export interface NewMessage {
  message_id: string;
  team_uid: string;
  root_run_id: string;
  sender_run_id: string;
  recipient_run_id: string;
  subject: string;
  body: string;
}

export async function insertMessages(db: Kysely<DB>, messages: NewMessage[]): Promise<void> {
  await db.insertInto('agent_messages').values(messages).execute();
}

export async function inbox(
  db: Kysely<DB>,
  recipientRunId: string,
  options: { unread: boolean; since?: string; limit: number },
) {
  let query = db
    .selectFrom('agent_messages')
    .select(['message_id', 'sender_run_id', 'subject', 'sent_at', 'delivered_at', 'read_at'])
    .where('recipient_run_id', '=', recipientRunId);
  if (options.unread) query = query.where('read_at', 'is', null);
  // Times are answered to the millisecond; compared at that precision, a header's own sent_at is not after itself.
  if (options.since)
    query = query.where(sql<boolean>`date_trunc('milliseconds', sent_at) > ${new Date(options.since)}`);
  return query.orderBy('sent_at').orderBy('message_id').limit(options.limit).execute();
}

export async function findMessage(db: Kysely<DB>, messageId: string) {
  return db.selectFrom('agent_messages').selectAll().where('message_id', '=', messageId).executeTakeFirst();
}

/** Sets the mark once: the first read (or delivery) keeps its time; reading also counts as delivered. */
export async function markMessage(db: Kysely<DB>, messageId: string, mark: 'delivered' | 'read') {
  const now = sql<Date>`clock_timestamp()`;
  const delivered = sql<Date>`coalesce(delivered_at, ${now})`;
  return db
    .updateTable('agent_messages')
    .set(
      mark === 'read'
        ? { read_at: sql<Date>`coalesce(read_at, ${now})`, delivered_at: delivered }
        : { delivered_at: delivered },
    )
    .where('message_id', '=', messageId)
    .returningAll()
    .executeTakeFirstOrThrow();
}
