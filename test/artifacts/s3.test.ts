import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';
import { getRun, harnessEnv, script, waitForState } from '../support/engine.js';
import { createRun } from '../support/runs.js';
import { startTestServer, type TestServer } from '../support/server.js';

// s3rver is a real HTTP server speaking the S3 protocol (it checks request signatures against these keys).
const BUCKET = 'hangar-artifacts';
const CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

let s3rver: S3rver;
let endpoint: string;
let hangar: TestServer;
const storage = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-s3-'));

before(async () => {
  s3rver = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory: storage,
    configureBuckets: [{ name: BUCKET, configs: [] }],
  });
  const address = await s3rver.run();
  endpoint = `http://127.0.0.1:${address.port}`;
  hangar = await startTestServer(
    harnessEnv(
      {},
      {
        HANGAR_S3_BUCKET: BUCKET,
        HANGAR_S3_ENDPOINT: endpoint,
        HANGAR_S3_PREFIX: 'team-blobs/',
        HANGAR_S3_ACCESS_KEY_ID: CREDENTIALS.accessKeyId,
        HANGAR_S3_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey,
      },
    ),
  );
});
after(async () => {
  await hangar?.stop();
  await s3rver?.close();
  fs.rmSync(storage, { recursive: true, force: true });
});

test('with HANGAR_S3_BUCKET the bytes of artifacts live in the bucket and download through signed links', async () => {
  const runId = await createRun(hangar, {
    prompt: script(
      { file: { path: 'out.txt', content: 'stored in S3' } },
      { emit: { type: 'artifact', artifact_type: 'FILE', data: { path: 'out.txt' } } },
      { emit: { type: 'artifact', artifact_type: 'PLAN', data: { title: 'plan', content: 'step one' } } },
    ),
  });
  assert.equal((await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR')).state, 'SUCCEEDED');
  const run = await getRun(hangar, runId);
  const file = run.artifacts.find((artifact: any) => artifact.artifact_type === 'FILE').data.artifact_uid;
  const plan = run.artifacts.find((artifact: any) => artifact.artifact_type === 'PLAN').data.artifact_uid;

  const client = new S3Client({ region: 'us-east-1', endpoint, forcePathStyle: true, credentials: CREDENTIALS });
  try {
    const listed = await client.send(new ListObjectsV2Command({ Bucket: BUCKET }));
    assert.deepEqual(
      listed.Contents?.map((object) => object.Key).sort(),
      [`team-blobs/artifacts/${file}`, `team-blobs/artifacts/${plan}`].sort(),
    );
    const object = await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: `team-blobs/artifacts/${file}` }));
    assert.equal(await object.Body!.transformToString(), 'stored in S3');
  } finally {
    client.destroy();
  }
  assert.equal(fs.existsSync(path.join(hangar.dataDir, 'blobs')), false);

  const read = await hangar.request('GET', `/agent/artifacts/${file}`);
  assert.equal(read.status, 200);
  const download = await fetch(read.body.data.download_url);
  assert.equal(download.status, 200);
  assert.equal(await download.text(), 'stored in S3');
  assert.equal((await hangar.request('GET', `/agent/artifacts/${plan}`)).body.data.content, 'step one');
});
