/**
 * Builds the migrated database template once per test run (a fresh PGlite costs ~2.5 s of initdb, a copy of a
 * migrated directory ~0.5 s). Run by scripts/run-tests.mjs; prints the template location as JSON.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { openDatabase } from '../../src/platform/db/connect.js';
import { processIsAlive } from '../../src/platform/db/lock-file.js';
import { migrate } from '../../src/platform/db/migrate.js';
import { loadLifecycleFunctions } from '../../src/runs/lifecycle/functions.js';

async function main(): Promise<void> {
  const adminUrl = process.env.TEST_DATABASE_URL;
  if (adminUrl) {
    // Named after the test run (the runner's pid) so that concurrent runs on one server leave each other alone.
    const runId = process.ppid;
    const name = `hangar_tpl_${runId}`;
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    // Leftovers of interrupted runs: databases of test runs whose runner is gone.
    const stale = await admin.query(`SELECT datname FROM pg_database WHERE datname ~ '^hangar_(tpl|t)_[0-9]+'`);
    for (const row of stale.rows as { datname: string }[]) {
      const owner = Number(/^hangar_(?:tpl|t)_(\d+)/.exec(row.datname)![1]);
      if (!processIsAlive(owner)) await admin.query(`DROP DATABASE IF EXISTS "${row.datname}" WITH (FORCE)`);
    }
    await admin.query(`CREATE DATABASE "${name}"`);
    await admin.end();
    const url = new URL(adminUrl);
    url.pathname = `/${name}`;
    const database = await openDatabase({ databaseUrl: url.toString(), dataDir: os.tmpdir(), poolSize: 1 });
    await migrate(database.db, undefined, undefined, [loadLifecycleFunctions()]);
    await database.close();
    process.stdout.write(JSON.stringify({ kind: 'postgres', template: name }));
    return;
  }
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-template-'));
  const database = await openDatabase({ dataDir, poolSize: 1 });
  await migrate(database.db, undefined, undefined, [loadLifecycleFunctions()]);
  await database.close();
  process.stdout.write(JSON.stringify({ kind: 'pglite', template: path.join(dataDir, 'pglite') }));
}

await main();
