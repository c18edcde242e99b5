// src/platform/db/schema.sql is what the migrations make of an empty database (issue 55.7): a reader sees the
// current schema in one file, and a migration committed without regenerating it fails here.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import { dumpSchema, SCHEMA_FILE } from '../../scripts/schema-dump.js';
import { createTestDatabase } from '../support/server.js';

// pg_dump is the reference, and it reads PostgreSQL only: the PostgreSQL leg of the suite (CI runs both) checks it.
const postgres = process.env.TEST_DATABASE_URL ? false : 'the schema file is checked on PostgreSQL (pg_dump)';

test('src/platform/db/schema.sql is the schema the migrations make', { skip: postgres }, async () => {
  const database = await createTestDatabase();
  try {
    const fresh = dumpSchema(database.databaseUrl!);
    const committed = fs.readFileSync(SCHEMA_FILE, 'utf8');
    assert.ok(fresh === committed, 'src/platform/db/schema.sql is stale: run `npm run gen:schema` and commit it');
  } finally {
    await database.drop();
  }
});
