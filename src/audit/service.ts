import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { DB } from '../database.js';
import { invalidRequest } from '../platform/http/errors.js';
import { type CursorCodec, InvalidCursorError } from '../platform/http/pagination.js';
import type { AuditQuery } from './schemas.js';
import { type AuditEntry, type AuditRow, insertEntry, listEntries } from './store.js';

const ORDERING = 'audit:id:desc';

/** The audit log: entries are only ever added (by the API hook) and read; retention alone removes old ones. */
export class AuditLog {
  constructor(private readonly options: { db: Kysely<DB>; cursors: CursorCodec; log: FastifyBaseLogger }) {}

  /** Records an entry; a failure is logged, never the caller's (the change it records has been made). */
  async record(entry: AuditEntry): Promise<void> {
    try {
      await insertEntry(this.options.db, entry);
    } catch (error) {
      this.options.log.error(
        { err: error, action: entry.action, target: entry.target },
        'could not write an audit entry',
      );
    }
  }

  /** A page of entries, newest first: one team's, or (`teamUid` undefined, instance administrators) everyone's. */
  async list(query: AuditQuery, teamUid: string | undefined) {
    const limit = query.limit ?? 50;
    let before: string | undefined;
    if (query.cursor !== undefined) {
      try {
        const [id] = this.options.cursors.decode(query.cursor, ORDERING);
        if (typeof id !== 'string' || !/^\d+$/.test(id)) throw invalidRequest('cursor: malformed position');
        before = id;
      } catch (error) {
        if (error instanceof InvalidCursorError || error instanceof SyntaxError)
          throw invalidRequest(`cursor: ${error.message}`);
        throw error;
      }
    }
    const rows = await listEntries(
      this.options.db,
      { ...(teamUid !== undefined ? { teamUid } : {}), ...(query.action ? { action: query.action } : {}), before },
      limit + 1,
    );
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return {
      entries: page.map(render),
      page_info: {
        has_next_page: rows.length > limit,
        ...(rows.length > limit && last
          ? { next_cursor: this.options.cursors.encode({ ordering: ORDERING, values: [last.id] }) }
          : {}),
      },
    };
  }
}

function render(row: AuditRow) {
  return {
    id: row.id,
    at: new Date(row.at).toISOString(),
    team_uid: row.team_uid,
    actor: { type: row.actor_type, uid: row.actor_uid },
    key_uid: row.key_uid,
    client_address: row.client_address,
    action: row.action,
    target: row.target,
    details: row.details,
  };
}
