import { createHmac } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import type { DB } from '../database.js';
import { insertEntry } from './store.js';

/** The instance_settings row holding a digest of each setting as the last start saw it. */
const SETTINGS_KEY = 'audit_settings_digests';

/**
 * Instance settings come from the environment and the operator file, not from the API, so they are audited when a
 * server starts: each setting (a field of the parsed configuration) is kept as an HMAC under the instance's secret
 * key (never its value: some are credentials), and a start whose settings differ from the last one's records
 * `instance.settings_change` with the names of those that changed. The row is compared and replaced in one
 * transaction with the row locked, so replicas starting together record one change once. The first start records
 * nothing (there is nothing to compare with).
 */
export async function auditSettingsChanges(
  db: Kysely<DB>,
  settings: Readonly<Record<string, unknown>>,
  secretKey: Buffer,
): Promise<string[]> {
  const digests: Record<string, string> = {};
  for (const [name, value] of Object.entries(settings)) {
    if (typeof value === 'function') continue;
    digests[name] = createHmac('sha256', secretKey)
      .update(`${name}\0${JSON.stringify(value) ?? 'undefined'}`)
      .digest('base64url');
  }
  const text = JSON.stringify(digests);
  return db.transaction().execute(async (trx) => {
    const row = await sql<{ value: string | null }>`
      SELECT value FROM instance_settings WHERE key = ${SETTINGS_KEY} FOR UPDATE`.execute(trx);
    const before = row.rows[0]?.value;
    if (before === text) return [];
    await sql`
      INSERT INTO instance_settings (key, value) VALUES (${SETTINGS_KEY}, ${text})
      ON CONFLICT (key) DO UPDATE SET value = excluded.value`.execute(trx);
    if (before === undefined || before === null) return [];
    const previous = JSON.parse(before) as Record<string, string>;
    const changed = [...new Set([...Object.keys(previous), ...Object.keys(digests)])]
      .filter((name) => previous[name] !== digests[name])
      .sort();
    await insertEntry(trx, {
      teamUid: null,
      actorType: 'operator',
      actorUid: 'configuration',
      keyUid: null,
      clientAddress: null,
      action: 'instance.settings_change',
      target: null,
      details: { changed },
    });
    return changed;
  });
}
