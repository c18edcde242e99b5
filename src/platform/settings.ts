import type { Kysely } from 'kysely';
import { randomSecret } from './crypto.js';
import type { DB } from './db/schema.js';

/**
 * An instance-wide secret generated once and shared by every replica through the database (for example the
 * key that signs pagination cursors, so a cursor from one replica is valid on another).
 */
export async function instanceSecret(db: Kysely<DB>, key: string): Promise<string> {
  await db
    .insertInto('instance_settings')
    .values({ key, value: randomSecret(32) })
    .onConflict((oc) => oc.column('key').doNothing())
    .execute();
  const row = await db.selectFrom('instance_settings').select('value').where('key', '=', key).executeTakeFirstOrThrow();
  return row.value;
}
