import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import pg from 'pg';
import { onPostgres } from '../support/processes.js';
import { createRun } from '../support/runs.js';
import { startTestServer } from '../support/server.js';

const postgresOnly = onPostgres() ? false : 'PostgreSQL terminating connections (PGlite has no server to do it)';

/** Terminates every other backend connected to `database`, as an administrator or a failover would. */
async function terminateBackends(database: string): Promise<number> {
  const admin = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
  await admin.connect();
  try {
    const result = await admin.query(
      'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
      [database],
    );
    return result.rowCount ?? 0;
  } finally {
    await admin.end();
  }
}

test('a connection PostgreSQL drops while checked out fails its transaction, not the process', {
  skip: postgresOnly,
}, async (t) => {
  const server = await startTestServer();
  t.after(() => server.stop());
  const database = (await sql<{ name: string }>`SELECT current_database() AS name`.execute(server.db)).rows[0]!.name;

  // Hold a connection inside a transaction, idle between two statements, while the server terminates it: without
  // a listener on checked-out connections node-postgres throws the 'error' event and the process dies.
  const transaction = server.db.transaction().execute(async (trx) => {
    await sql`SELECT 1`.execute(trx);
    assert.ok((await terminateBackends(database)) > 0);
    // The termination reaches the idle connection's socket with no event this test can wait on: time for it.
    await sleep(200);
    await sql`SELECT 1`.execute(trx);
  });
  await assert.rejects(transaction);

  // The pool replaced the broken connections: the API works again.
  const runId = await createRun(server, { prompt: 'after the connections were dropped' });
  assert.equal((await server.request('GET', `/agent/runs/${runId}`)).status, 200);
});
