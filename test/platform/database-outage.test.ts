/**
 * A PostgreSQL outage, for real: the test's own cluster (test/support/private-postgres.ts) is shut down, killed and
 * started again under a running server. The API answers 503 (retryable, Retry-After) while it is down, and an
 * execution that ends during the outage records its transcript and its end once the database is back.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { generateApiKey } from '../../src/platform/crypto.js';
import { toApiError } from '../../src/platform/http/errors.js';
import { harnessEnv } from '../support/engine.js';
import { assertNothingLost, OUTAGE_HARNESS, outageApi, outageHarnessWaiting } from '../support/outage-run.js';
import { type PrivatePostgres, privatePostgresUnavailable, startPrivatePostgres } from '../support/private-postgres.js';
import { onPostgres, spawnKeyedServer, stopChild } from '../support/processes.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { createWebhook, deliver } from '../support/webhooks.js';

const skip = !onPostgres()
  ? 'a database outage needs a database server (PGlite runs inside the process)'
  : privatePostgresUnavailable();

/** The pause between two looks at something the test waits for (a state, a line, a backend's wait). */
const nextLook = () => new Promise((resolve) => setTimeout(resolve, 50));

/** Every answer given while the database is down: problem+json, 503, retryable, with Retry-After. */
function assertUnavailable(response: { status: number; headers: Headers; body: any }, what: string): void {
  assert.equal(response.status, 503, `${what}: ${response.status} ${JSON.stringify(response.body)}`);
  assert.match(response.headers.get('content-type') ?? '', /^application\/problem\+json/, what);
  assert.equal(response.headers.get('retry-after'), '2', what);
  assert.equal(response.body.error_code, 'resource_unavailable', what);
  assert.equal(response.body.retryable, true, what);
}

describe('the API while PostgreSQL is down', { skip }, () => {
  let cluster: PrivatePostgres;
  let hangar: TestServer;
  let ingressUrl: string;
  let ingressSecret: string;
  before(async () => {
    cluster = await startPrivatePostgres();
    hangar = await startTestServer({}, { database: await cluster.createDatabase() });
    const webhook = await createWebhook(hangar, { name: 'outage' });
    ingressUrl = webhook.url;
    ingressSecret = webhook.secret;
  });
  after(async () => {
    // The server stops cleanly only with its database up; it is stopped even if the database cannot start again,
    // or the test process would never exit.
    try {
      if (!cluster.running()) await cluster.start();
    } finally {
      await hangar.stop();
      await cluster.destroy();
    }
  });

  const createRun = () => hangar.request('POST', '/agent/runs', { body: { prompt: 'during the outage' } });
  // A key never seen before: the check must read it from the database (there is no cache), and must not call it
  // unknown (401) because the database could not say.
  const checkUnknownKey = () => hangar.request('GET', '/agent/runs', { apiKey: generateApiKey() });
  const deliverWebhook = () =>
    deliver(ingressUrl, JSON.stringify({ event: 'outage' }), {
      authorization: `Bearer ${ingressSecret}`,
      'content-type': 'application/json',
    });

  for (const how of ['stop', 'kill'] as const) {
    test(`run creation, API key checks and webhook ingress answer 503 after a ${how}, and work once it is back`, async () => {
      if (how === 'stop') await cluster.stop('fast');
      else await cluster.kill();
      assertUnavailable(await createRun(), 'run creation');
      assertUnavailable(await checkUnknownKey(), 'API key check');
      assertUnavailable(await hangar.request('GET', '/agent/runs'), 'a read');
      assertUnavailable(await deliverWebhook(), 'webhook ingress');

      await cluster.start();
      assert.equal((await createRun()).status, 200);
      assert.equal((await checkUnknownKey()).status, 401);
      assert.equal((await deliverWebhook()).status, 202);
    });
  }
});

describe('what the database driver throws when it loses the database is a 503', { skip }, () => {
  let cluster: PrivatePostgres;
  before(async () => {
    cluster = await startPrivatePostgres();
  });
  after(() => cluster.destroy());

  /** The error of a query that was running when `fault` happened. */
  async function errorOfQueryDuring(fault: (backendPid: number) => Promise<void>): Promise<unknown> {
    const client = new pg.Client({ connectionString: cluster.url() });
    client.on('error', () => undefined);
    await client.connect();
    const pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
    const running = client.query('SELECT pg_sleep(60)').then(
      () => assert.fail('the query should have failed'),
      (error: unknown) => error,
    );
    const admin = new pg.Client({ connectionString: cluster.url() });
    await admin.connect();
    // Wait until the backend is inside the sleep, so the fault hits a statement in progress.
    for (;;) {
      const state = await admin.query('SELECT wait_event FROM pg_stat_activity WHERE pid = $1', [pid]);
      if (state.rows[0]?.wait_event === 'PgSleep') break;
      // A backend's wait in another process (PostgreSQL): only pg_stat_activity tells.
      await nextLook();
    }
    await admin.end();
    await fault(pid);
    const error = await running;
    await client.end().catch(() => undefined);
    return error;
  }

  test('57P01: the session is terminated (an administrator, a failover, a fast shutdown)', async () => {
    const error = await errorOfQueryDuring(async (pid) => {
      const admin = new pg.Client({ connectionString: cluster.url() });
      await admin.connect();
      await admin.query('SELECT pg_terminate_backend($1)', [pid]);
      await admin.end();
    });
    assert.equal((error as { code?: string }).code, '57P01');
    assert.equal(toApiError(error).status, 503);
  });

  test('the server is killed in the middle of a statement', async () => {
    const error = await errorOfQueryDuring(() => cluster.kill());
    assert.equal(toApiError(error).status, 503, String(error));
    await cluster.start();
  });

  test('the server is down: the connection is refused', async () => {
    await cluster.stop();
    const client = new pg.Client({ connectionString: cluster.url() });
    const error = await client.connect().then(
      () => assert.fail('the connection should have been refused'),
      (failure: unknown) => failure,
    );
    assert.equal(toApiError(error).status, 503, String(error));
    await cluster.start();
  });

  test('no pooled connection comes free in time', async () => {
    const pool = new pg.Pool({ connectionString: cluster.url(), max: 1, connectionTimeoutMillis: 50 });
    const held = await pool.connect();
    const error = await pool.query('SELECT 1').then(
      () => assert.fail('the query should have timed out waiting for a connection'),
      (failure: unknown) => failure,
    );
    held.release();
    await pool.end();
    assert.equal(toApiError(error).status, 503, String(error));
  });
});

describe('an execution that ends while PostgreSQL is down', { skip }, () => {
  let cluster: PrivatePostgres;
  before(async () => {
    cluster = await startPrivatePostgres();
  });
  after(() => cluster.destroy());

  for (const how of ['stop', 'kill'] as const) {
    // The timeout only stops a hung test; nothing here measures time.
    test(`records its transcript and its end once the database is back (${how})`, { timeout: 120_000 }, async (t) => {
      const database = await cluster.createDatabase();
      const server = await spawnKeyedServer(
        database,
        harnessEnv({ outage: { command: [process.execPath, OUTAGE_HARNESS] } }, { HANGAR_RUN_LEASE_SECONDS: '6' }),
      );
      const { child } = server;
      t.after(async () => {
        try {
          if (!cluster.running()) await cluster.start();
        } finally {
          await stopChild(child);
          await database.drop();
        }
      });
      let log = '';
      const logged = (pattern: RegExp) =>
        new Promise<string>((resolve) => {
          const check = () => {
            const match = log.match(pattern);
            if (!match) return false;
            child.stdout!.off('data', onData);
            resolve(match[0]);
            return true;
          };
          const onData = (chunk: Buffer) => {
            log += chunk.toString();
            check();
          };
          child.stdout!.on('data', onData);
        });
      const api = outageApi(server);

      const created = await api.request('POST', '/agent/runs', {
        prompt: 'outage',
        config: { harness: { type: 'outage' } },
      });
      assert.equal(created.status, 200);
      const runId = ((await created.json()) as { run_id: string }).run_id;
      await outageHarnessWaiting(api, runId);

      if (how === 'stop') await cluster.stop('fast');
      else await cluster.kill();
      // The agent finishes its work while the database is down...
      const workspace = path.join(database.dataDir, 'workspaces', `${runId}.1`);
      const seen = logged(/database unavailable: retrying a run write|could not record how the run ended/);
      fs.writeFileSync(path.join(workspace, 'release'), '');
      // ...and the engine has tried to write it, and failed, before the database comes back (the log says so: it
      // retries now; it gave up before).
      await seen;
      await cluster.start();

      const run = await assertNothingLost(api, runId, ['agent_progress', 'vm_shutdown', 'oz_run_done']);
      assert.deepEqual(
        run.artifacts.map((artifact: { artifact_type: string; data: { url: string } }) => [
          artifact.artifact_type,
          artifact.data.url,
        ]),
        [['PULL_REQUEST', 'https://example.invalid/pr/23']],
      );
    });
  }
});
