import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Kysely } from 'kysely';
import { hmacSha256, parseSecretKey, randomSecret, SECRET_KEY_BYTES } from './crypto.js';
import { type PlatformTables, platformTablesOf } from './db/tables.js';

/** Where the generated key lives when HANGAR_SECRET_KEY is not set. */
function secretKeyFile(dataDir: string): string {
  return path.join(dataDir, 'secret-key');
}

/**
 * The key that encrypts team secrets: HANGAR_SECRET_KEY when configured, else `<dataDir>/secret-key`, generated
 * (mode 0600) on the first start and reused afterwards.
 */
export function loadSecretKey(configured: Buffer | undefined, dataDir: string): Buffer {
  if (configured) return configured;
  const file = secretKeyFile(dataDir);
  if (!fs.existsSync(file)) createKeyFile(file);
  const key = parseSecretKey(fs.readFileSync(file, 'utf8'));
  if (!key) throw new Error(`${file} does not hold a valid secret key (${SECRET_KEY_BYTES} bytes as base64 or hex)`);
  return key;
}

/**
 * Written to a temporary file, flushed, then linked into place: two processes starting together on one data
 * directory both end up reading the one complete key, never a half-written or a second one.
 */
function createKeyFile(file: string): void {
  const temporary = `${file}.${process.pid}.${randomSecret(6)}.tmp`;
  const descriptor = fs.openSync(temporary, 'wx', 0o600);
  try {
    fs.writeSync(descriptor, `${randomBytes(SECRET_KEY_BYTES).toString('base64')}\n`);
    fs.fsyncSync(descriptor);
  } finally {
    fs.closeSync(descriptor);
  }
  try {
    fs.linkSync(temporary, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    fs.unlinkSync(temporary);
  }
}

/**
 * Records a fingerprint of the key on the first start and compares it on every later one. Replicas with
 * different keys (or a lost key file) would otherwise write secrets the others cannot read; refusing to start
 * makes the mistake loud instead.
 */
export async function checkSecretKey<T extends PlatformTables>(
  database: Kysely<T>,
  key: Buffer,
  dataDir: string,
): Promise<void> {
  const db = platformTablesOf(database);
  const fingerprint = hmacSha256(key, 'hangar secret key fingerprint').toString('base64url');
  await db
    .insertInto('instance_settings')
    .values({ key: 'secret_key_fingerprint', value: fingerprint })
    .onConflict((oc) => oc.column('key').doNothing())
    .execute();
  const stored = await db
    .selectFrom('instance_settings')
    .select('value')
    .where('key', '=', 'secret_key_fingerprint')
    .executeTakeFirstOrThrow();
  if (stored.value !== fingerprint) {
    throw new Error(
      `the secret key (HANGAR_SECRET_KEY, or ${secretKeyFile(dataDir)} when it is unset) is not the one this ` +
        "database's secrets were encrypted with; every replica must use the same HANGAR_SECRET_KEY",
    );
  }
}
