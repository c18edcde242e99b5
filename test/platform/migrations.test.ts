import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import { type BootstrapResult, bootstrapInstance } from '../../src/identities/bootstrap.js';
import { hashApiKey } from '../../src/platform/crypto.js';
import { type Database, openDatabase } from '../../src/platform/db/connect.js';
import { appliedVersions, loadMigrations, type Migration, migrate } from '../../src/platform/db/migrate.js';
import { onPostgres } from '../support/processes.js';

/** Replicas starting together; each has its own pool, as separate processes would. */
const REPLICAS = 4;

/**
 * A migration that would not fail if applied twice (IF NOT EXISTS) but leaves one row per application, so
 * "exactly once" is observed, not inferred from an error.
 */
const PROBE: Migration = {
  version: 999_001,
  name: 'probe',
  sql: `CREATE TABLE IF NOT EXISTS migration_probe (applied serial PRIMARY KEY);
        INSERT INTO migration_probe DEFAULT VALUES;`,
};

async function withAdmin<T>(work: (admin: pg.Client) => Promise<T>): Promise<T> {
  const admin = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
  await admin.connect();
  try {
    return await work(admin);
  } finally {
    await admin.end();
  }
}

test('replicas migrating one fresh PostgreSQL database at once apply each migration once and bootstrap one team', async (t) => {
  if (!onPostgres()) {
    t.skip('PostgreSQL only: an embedded PGlite directory has one process by design');
    return;
  }
  const name = `hangar_t_migrate_${randomBytes(6).toString('hex')}`;
  await withAdmin((admin) => admin.query(`CREATE DATABASE "${name}"`));
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-migrate-'));
  const databases: Database[] = [];
  t.after(async () => {
    await Promise.all(databases.map((database) => database.close()));
    await withAdmin((admin) => admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
  const url = new URL(process.env.TEST_DATABASE_URL!);
  url.pathname = `/${name}`;
  for (let i = 0; i < REPLICAS; i++) {
    databases.push(await openDatabase({ databaseUrl: url.toString(), dataDir, poolSize: 2 }));
  }

  const migrations = [...loadMigrations(), PROBE];
  const bootstraps: BootstrapResult[] = [];
  const applied = await Promise.all(
    databases.map((database) =>
      migrate(
        database.db,
        async (locked) => {
          // No configured key: the one replica that bootstraps generates one and writes the key file.
          bootstraps.push(await bootstrapInstance(locked, { bootstrapApiKey: undefined, dataDir }));
        },
        migrations,
      ),
    ),
  );

  const allVersions = migrations.map((migration) => migration.version);
  assert.deepEqual(
    applied.flat().sort((a, b) => a - b),
    allVersions,
    'each migration applied by exactly one replica',
  );
  assert.equal(
    applied.filter((versions) => versions.length > 0).length,
    1,
    'the first replica to lock applies them all',
  );
  assert.deepEqual(
    [...(await appliedVersions(databases[0]!.db))].sort((a, b) => a - b),
    allVersions,
  );

  const { db } = databases[0]!;
  const probeRows = await sql<{ count: number }>`SELECT count(*)::int AS count FROM migration_probe`.execute(db);
  assert.equal(probeRows.rows[0]!.count, 1, 'the probe migration ran more than once');

  assert.equal(bootstraps.length, REPLICAS, 'every replica ran the after-migrations step');
  const generated = bootstraps.filter((result) => result.generatedKey !== undefined);
  assert.equal(generated.length, 1, 'exactly one replica bootstrapped');
  const teams = await db.selectFrom('teams').select(['uid', 'name']).execute();
  assert.deepEqual(
    teams.map((team) => team.name),
    ['default'],
  );
  assert.equal((await db.selectFrom('users').select('uid').execute()).length, 1);
  const keys = await db.selectFrom('api_keys').select('key_hash').execute();
  assert.deepEqual(
    keys.map((key) => key.key_hash),
    [hashApiKey(generated[0]!.generatedKey!)],
  );
  assert.equal(fs.readFileSync(path.join(dataDir, 'bootstrap-api-key'), 'utf8'), `${generated[0]!.generatedKey}\n`);

  // The startup lock is released: a later start takes it, applies nothing and bootstraps nothing.
  // pg_locks spans the cluster; other test files migrate their own databases meanwhile.
  const advisoryLocks = await sql<{ count: number }>`SELECT count(*)::int AS count FROM pg_locks
    WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`.execute(
    db,
  );
  assert.equal(advisoryLocks.rows[0]!.count, 0);
  let laterBootstrap: BootstrapResult | undefined;
  const later = await migrate(
    databases[1]!.db,
    async (locked) => {
      laterBootstrap = await bootstrapInstance(locked, { bootstrapApiKey: undefined, dataDir });
    },
    migrations,
  );
  assert.deepEqual(later, []);
  assert.deepEqual(laterBootstrap, {});
  assert.equal((await db.selectFrom('teams').select('uid').execute()).length, 1);
});
