import type { Kysely } from 'kysely';

/**
 * Kysely's view of platform's own table. Each slice declares its tables in its tables.ts and src/database.ts
 * composes them into DB. Keep them in step with the SQL migrations in ./migrations.
 */

export interface InstanceSettingsTable {
  key: string;
  /** A plain setting; null for an encrypted one. */
  value: string | null;
  iv: Buffer | null;
  auth_tag: Buffer | null;
  ciphertext: Buffer | null;
}

export interface PlatformTables {
  instance_settings: InstanceSettingsTable;
}

/**
 * The application's database seen as only platform's tables: platform code takes any database that has them
 * (Kysely's types are invariant in the table map, so a Kysely<DB> is not a Kysely<PlatformTables> by itself).
 */
export function platformTablesOf<T extends PlatformTables>(db: Kysely<T>): Kysely<PlatformTables> {
  return db as unknown as Kysely<PlatformTables>;
}
