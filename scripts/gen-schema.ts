// Writes src/platform/db/schema.sql: a scratch PostgreSQL database migrated from nothing, dumped, dropped. The
// server is TEST_DATABASE_URL's, else the local one (postgres://postgres@127.0.0.1:5432/postgres).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { openDatabase } from '../src/platform/db/connect.js';
import { migrate } from '../src/platform/db/migrate.js';
import { loadLifecycleFunctions } from '../src/runs/lifecycle/functions.js';
import { dumpSchema, SCHEMA_FILE } from './schema-dump.js';

const adminUrl = process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const name = `hangar_schema_${process.pid}`;
const admin = new pg.Client({ connectionString: adminUrl });
await admin.connect();
await admin.query(`CREATE DATABASE "${name}"`);
try {
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const database = await openDatabase({ databaseUrl: url.toString(), dataDir: os.tmpdir(), poolSize: 1 });
  try {
    await migrate(database.db, undefined, undefined, [loadLifecycleFunctions()]);
  } finally {
    await database.close();
  }
  fs.writeFileSync(SCHEMA_FILE, dumpSchema(url.toString()));
  process.stdout.write(`wrote ${path.relative(process.cwd(), SCHEMA_FILE)}\n`);
} finally {
  await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await admin.end();
}
