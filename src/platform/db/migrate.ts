import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Kysely, sql } from 'kysely';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** Arbitrary but fixed: every replica takes this advisory lock while it migrates and bootstraps. */
const STARTUP_LOCK_KEY = 4_126_870_312;

const MIGRATIONS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');

export function loadMigrations(directory = MIGRATIONS_DIR): Migration[] {
  return fs
    .readdirSync(directory)
    .filter((file) => file.endsWith('.sql'))
    .sort()
    .map((file) => {
      const match = /^(\d+)_([\w-]+)\.sql$/.exec(file);
      if (!match) throw new Error(`migration file ${file} must be named NNNN_name.sql`);
      return { version: Number(match[1]), name: match[2]!, sql: fs.readFileSync(path.join(directory, file), 'utf8') };
    });
}

async function ensureMigrationsTable<T>(db: Kysely<T>): Promise<void> {
  await sql`CREATE TABLE IF NOT EXISTS schema_migrations (
    version integer PRIMARY KEY,
    name text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT clock_timestamp()
  )`.execute(db);
}

export async function appliedVersions<T>(db: Kysely<T>): Promise<Set<number>> {
  const result = await sql<{ version: number }>`SELECT version FROM schema_migrations`.execute(db);
  return new Set(result.rows.map((row) => row.version));
}

/**
 * Applies every pending migration, each in its own transaction, then `functions` (SQL of CREATE OR REPLACE
 * FUNCTION statements, applied on every start so that the current body of each function is written once, in
 * one place), then runs `afterMigrations` (first-start bootstrap), all under one PostgreSQL advisory lock so that
 * replicas starting together take turns (two sessions replacing the same function at once can fail with "tuple
 * concurrently updated").
 */
export async function migrate<Tables>(
  db: Kysely<Tables>,
  afterMigrations?: (db: Kysely<Tables>) => Promise<void>,
  migrations: Migration[] = loadMigrations(),
  functions: string[] = [],
): Promise<number[]> {
  return db.connection().execute(async (connection) => {
    await sql`SELECT pg_advisory_lock(${STARTUP_LOCK_KEY})`.execute(connection);
    try {
      await ensureMigrationsTable(connection);
      const applied = await appliedVersions(connection);
      const newlyApplied: number[] = [];
      for (const migration of migrations) {
        if (applied.has(migration.version)) continue;
        await connection.transaction().execute(async (trx) => {
          await sql.raw(migration.sql).execute(trx);
          await sql`INSERT INTO schema_migrations (version, name) VALUES (${migration.version}, ${migration.name})`.execute(
            trx,
          );
        });
        newlyApplied.push(migration.version);
      }
      if (functions.length > 0) await applyFunctions(connection, functions);
      if (afterMigrations) await afterMigrations(connection);
      return newlyApplied;
    } finally {
      await sql`SELECT pg_advisory_unlock(${STARTUP_LOCK_KEY})`.execute(connection);
    }
  });
}

/** Replaces the functions in one transaction: one round trip and one commit (2 to 10 ms, measured). */
async function applyFunctions<T>(db: Kysely<T>, functions: string[]): Promise<void> {
  await db.transaction().execute((trx) => sql.raw(functions.join('\n')).execute(trx));
}
