import type { Kysely } from 'kysely';
import { openValue, randomSecret, type SealedValue, sealValue } from './crypto.js';
import { type PlatformTables, platformTablesOf } from './db/tables.js';

/** Binds a sealed instance key to its row: a ciphertext copied to another key does not decrypt. */
function context(key: string): string {
  return `hangar/instance-settings/${key}`;
}

function sealedColumns(sealed: SealedValue) {
  return { value: null, iv: sealed.iv, auth_tag: sealed.authTag, ciphertext: sealed.ciphertext };
}

/**
 * An instance-wide secret generated once and shared by every replica through the database (for example the
 * key that signs pagination cursors, so a cursor from one replica is valid on another). It is stored encrypted
 * under the secret key, like team secrets, so a database dump alone cannot mint download links or task tokens.
 * A key written in clear by an older version is sealed here on first use (migration 0016 cannot: SQL has no key).
 */
export async function instanceSecret<T extends PlatformTables>(
  database: Kysely<T>,
  key: string,
  secretKey: Buffer,
): Promise<string> {
  const db = platformTablesOf(database);
  await db
    .insertInto('instance_settings')
    .values({ key, ...sealedColumns(sealValue(secretKey, randomSecret(32), context(key))) })
    .onConflict((oc) => oc.column('key').doNothing())
    .execute();
  const row = await db.selectFrom('instance_settings').selectAll().where('key', '=', key).executeTakeFirstOrThrow();
  if (row.ciphertext && row.iv && row.auth_tag)
    return openValue(secretKey, { iv: row.iv, authTag: row.auth_tag, ciphertext: row.ciphertext }, context(key));
  const plain = row.value!;
  // Conditional on the clear value still being there: replicas starting together seal it once, to the same key.
  await db
    .updateTable('instance_settings')
    .set(sealedColumns(sealValue(secretKey, plain, context(key))))
    .where('key', '=', key)
    .where('value', '=', plain)
    .execute();
  return plain;
}
