import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pino } from 'pino';
import S3rver from 's3rver';
import { LocalBlobStore } from '../../src/platform/blobs/local.js';
import { S3BlobStore } from '../../src/platform/blobs/s3.js';
import type { BlobStore } from '../../src/platform/blobs/store.js';
import { deleteExpiredRuns, RunLifecycle } from '../../src/runs/index.js';
import { eventually, getRun, harnessEnv, script, waitForState } from '../support/engine.js';
import { createRun } from '../support/runs.js';
import { createTestDatabase, startTestServer, type TestServer } from '../support/server.js';

// Retention for real: runs that ended are deleted with everything of theirs, blobs included (local and the
// suite's S3 server), while pinned runs, runs with an open debug window and runs still going are kept.
const BUCKET = 'hangar-retention';
const CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };
const DAY = 86_400_000;
const withPlan = script(
  { file: { path: 'out.txt', content: 'file bytes' } },
  { emit: { type: 'artifact', artifact_type: 'FILE', data: { path: 'out.txt' } } },
  { emit: { type: 'artifact', artifact_type: 'PLAN', data: { title: 'plan', content: 'step one' } } },
  { done: 'ok' },
);

async function blobKeysOf(hangar: TestServer, runId: string): Promise<string[]> {
  const rows = await hangar.db.selectFrom('artifacts').select('blob_key').where('run_id', '=', runId).execute();
  return rows.map((row) => row.blob_key!).filter(Boolean);
}

async function exists(blobs: BlobStore, key: string): Promise<boolean> {
  return (await blobs.read(key)) !== null;
}

function retentionSuite(
  name: string,
  setUp: () => Promise<{ env: Record<string, string>; blobs: () => BlobStore; close: () => Promise<void> }>,
) {
  describe(name, () => {
    let hangar: TestServer;
    let blobs: BlobStore;
    let close: () => Promise<void>;
    before(async () => {
      const setup = await setUp();
      close = setup.close;
      hangar = await startTestServer(harnessEnv({}, { ...setup.env, HANGAR_SANDBOX: 'process' }));
      blobs = setup.env.HANGAR_S3_BUCKET ? setup.blobs() : new LocalBlobStore(path.join(hangar.dataDir, 'blobs'));
    });
    after(async () => {
      await hangar?.stop();
      await close?.();
    });

    test('deletes exactly the ended runs past the retention, with their events, transcript and blobs', async () => {
      const expired = await createRun(hangar, {
        prompt: withPlan,
        attachments: [{ file_name: 'a.png', mime_type: 'image/png', data: 'AAAA' }],
      });
      const pinned = await createRun(hangar, { prompt: withPlan, metadata: { keep: 'true' } });
      const environment = await hangar.request('POST', '/api/v1/environments', {
        body: { name: 'broken', setup_commands: ['exit 3'], failure_session_retention_minutes: 30 },
      });
      assert.equal(environment.status, 201, JSON.stringify(environment.body));
      const debugging = await createRun(hangar, { config: { environment_id: environment.body.uid } });
      const going = await createRun(hangar, {
        prompt: script({ sleep: 60_000 }),
        config: { harness: { type: 'listener' } },
      });
      for (const id of [expired, pinned])
        assert.equal((await waitForState(hangar, id, 'SUCCEEDED', 'FAILED')).state, 'SUCCEEDED');
      // A follow-up continues the expired run: it has inputs too (and a second execution's transcript).
      const followup = await hangar.request('POST', `/agent/runs/${expired}/followups`, { body: { message: 'again' } });
      assert.equal(followup.status, 200, JSON.stringify(followup.body));
      assert.equal((await waitForState(hangar, expired, 'SUCCEEDED', 'FAILED')).state, 'SUCCEEDED');
      const failed = await waitForState(hangar, debugging, 'FAILED', 'SUCCEEDED', 'ERROR');
      assert.ok(failed.status_message.session_debug_until, JSON.stringify(failed.status_message));
      await waitForState(hangar, going, 'INPROGRESS');
      const expiredKeys = await blobKeysOf(hangar, expired);
      const pinnedKeys = await blobKeysOf(hangar, pinned);
      assert.equal(expiredKeys.length, 4);
      for (const table of ['run_inputs', 'run_attachments'] as const) {
        const rows = await hangar.db.selectFrom(table).select('run_id').where('run_id', '=', expired).execute();
        assert.ok(rows.length > 0, `${table} rows of the expired run`);
      }
      for (const key of [...expiredKeys, ...pinnedKeys]) assert.ok(await exists(blobs, key), `${key} stored`);

      // Nothing ended a day ago yet: a pass today deletes nothing.
      const lifecycle = new RunLifecycle(hangar.db);
      const log = pino({ enabled: false });
      assert.equal(await deleteExpiredRuns({ lifecycle, blobs, days: 1, log }), 0);
      // Two days later, in batches of one.
      const later = () => new Date(Date.now() + 2 * DAY);
      assert.equal(await deleteExpiredRuns({ lifecycle, blobs, days: 1, log, now: later, batch: 1 }), 1);

      assert.equal((await hangar.request('GET', `/agent/runs/${expired}`)).status, 404);
      for (const table of ['run_events', 'run_transcript', 'artifacts', 'run_inputs', 'run_attachments'] as const) {
        const left = await hangar.db.selectFrom(table).select('run_id').where('run_id', '=', expired).execute();
        assert.equal(left.length, 0, `${table} rows left`);
      }
      for (const key of expiredKeys) assert.ok(!(await exists(blobs, key)), `${key} still stored`);
      // Kept: pinned (with its blobs), debug window open, still going.
      assert.equal((await getRun(hangar, pinned)).artifacts.length, 2);
      for (const key of pinnedKeys) assert.ok(await exists(blobs, key), `${key} of a pinned run deleted`);
      assert.equal((await getRun(hangar, debugging)).state, 'FAILED');
      assert.equal((await getRun(hangar, going)).state, 'INPROGRESS');
      await hangar.request('POST', `/agent/runs/${going}/cancel`);
    });
  });
}

retentionSuite('local blobs', async () => ({ env: {}, blobs: () => undefined as never, close: async () => {} }));

retentionSuite('S3 blobs', async () => {
  const storage = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-retention-s3-'));
  const s3rver = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory: storage,
    configureBuckets: [{ name: BUCKET, configs: [] }],
  });
  const endpoint = `http://127.0.0.1:${(await s3rver.run()).port}`;
  return {
    env: {
      HANGAR_S3_BUCKET: BUCKET,
      HANGAR_S3_ENDPOINT: endpoint,
      HANGAR_S3_PREFIX: 'kept/',
      HANGAR_S3_ACCESS_KEY_ID: CREDENTIALS.accessKeyId,
      HANGAR_S3_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey,
    },
    blobs: () =>
      new S3BlobStore({
        bucket: BUCKET,
        prefix: 'kept/',
        region: 'us-east-1',
        endpoint,
        forcePathStyle: true,
        credentials: CREDENTIALS,
      }),
    close: async () => {
      await s3rver.close();
      fs.rmSync(storage, { recursive: true, force: true });
    },
  };
});

// The loops' wiring: a server started with both retention settings deletes, by itself, the runs and the audit
// entries that are past them (its clock 400 days on, over the database another server left).
test('a server with HANGAR_RUN_RETENTION_DAYS and HANGAR_AUDIT_RETENTION_DAYS deletes old runs and audit entries by itself', async () => {
  const database = await createTestDatabase();
  const first = await startTestServer(harnessEnv({}, { HANGAR_SANDBOX: 'process' }), { database });
  let later: TestServer | undefined;
  try {
    const old = await createRun(first, { prompt: script({ done: 'ok' }) });
    const pinned = await createRun(first, { prompt: script({ done: 'ok' }), metadata: { keep: 'true' } });
    for (const id of [old, pinned])
      assert.equal((await waitForState(first, id, 'SUCCEEDED', 'FAILED')).state, 'SUCCEEDED');
    const secret = await first.request('POST', '/api/v1/secrets', {
      body: { name: 'OLD_TOKEN', value: 'old-token-value' },
    });
    assert.equal(secret.status, 201, JSON.stringify(secret.body));
    const audited = async (server: TestServer) =>
      (await server.request('GET', '/api/v1/audit?limit=100')).body.entries.map((entry: any) => entry.action);
    assert.ok((await audited(first)).includes('secret.create'));
    await first.stop();

    later = await startTestServer(
      { HANGAR_RUN_RETENTION_DAYS: '1', HANGAR_AUDIT_RETENTION_DAYS: '365', HANGAR_BOOTSTRAP_API_KEY: first.apiKey },
      { database, now: () => new Date(Date.now() + 400 * DAY) },
    );
    const server = later;
    await eventually('the old run and the old audit entry are deleted', async () => {
      const run = await server.request('GET', `/agent/runs/${old}`);
      return run.status === 404 && !(await audited(server)).includes('secret.create');
    });
    assert.equal((await getRun(server, pinned)).state, 'SUCCEEDED');
  } finally {
    await later?.stop();
    await database.drop();
  }
});
