import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { ARTIFACT_TYPES } from '../../src/runs/artifact-types.js';
import { RUN_STATES } from '../../src/runs/lifecycle/states.js';
import { EXECUTION_LOCATIONS } from '../../src/runs/run-fields.js';
import { SIGNATURE_SCHEME_NAMES } from '../../src/webhooks/schemes/index.js';
import { startTestServer } from '../support/server.js';

/**
 * Issue 55 item 5: a closed list of values lives twice, as a TypeScript list the code validates with and as a CHECK
 * constraint the database enforces. A value added to one and not the other is a 500 at the first insert (or a value
 * the code can never write). The migrated schema's constraints are read back and compared with the lists.
 */
const LISTS: Array<{ table: string; column: string; values: readonly string[] }> = [
  { table: 'runs', column: 'state', values: RUN_STATES },
  { table: 'runs', column: 'execution_location', values: EXECUTION_LOCATIONS },
  { table: 'artifacts', column: 'artifact_type', values: ARTIFACT_TYPES },
  { table: 'webhooks', column: 'signature_scheme', values: SIGNATURE_SCHEME_NAMES },
];

test('each CHECK list of the schema holds exactly the values of its TypeScript list', async (t) => {
  const hangar = await startTestServer({}, { role: 'api' });
  t.after(() => hangar.stop());
  for (const { table, column, values } of LISTS) {
    const rows = await sql<{ definition: string }>`
      SELECT pg_get_constraintdef(c.oid) AS definition FROM pg_constraint c
      JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = ANY (c.conkey)
      WHERE c.contype = 'c' AND c.conrelid = ${table}::regclass AND a.attname = ${column}
        AND cardinality(c.conkey) = 1`.execute(hangar.db);
    assert.equal(rows.rows.length, 1, `one CHECK constraint on ${table}.${column} alone`);
    const quoted = [...rows.rows[0]!.definition.matchAll(/'((?:[^']|'')*)'/g)].map((match) => match[1]!);
    assert.deepEqual([...quoted].sort(), [...values].sort(), `${table}.${column}: ${rows.rows[0]!.definition}`);
  }
});
