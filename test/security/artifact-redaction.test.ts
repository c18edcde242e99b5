/**
 * Issue 47, finding 8: an artifact uploaded through the harness-support route is stored without the run's secret
 * values in its query (filename, description, filepath), as its bytes and every other report already were.
 * Fastify parses the query string into an object without a prototype, which the redaction used to pass over.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { harnessEnv, outputTexts, waitForState } from '../support/engine.js';
import { startTestServer, type TestServer } from '../support/server.js';

const UPLOADER = fileURLToPath(new URL('./fixtures/upload-leaky-harness.mjs', import.meta.url));
const SECRET = 'upload-secret-5772156649';

let hangar: TestServer;

before(async () => {
  hangar = await startTestServer(
    harnessEnv({
      uploader: { command: [process.execPath, UPLOADER], network: true, env: { UPLOAD_SECRET: SECRET } },
    }),
  );
});
after(() => hangar?.stop());

test("upload-artifact's filename, description and filepath are stored with the run's secret values redacted", async () => {
  const created = await hangar.request('POST', '/agent/runs', {
    body: { prompt: 'upload notes', config: { harness: { type: 'uploader' } } },
  });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  const runId = created.body.run_id;
  const run = await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR');
  assert.equal(run.state, 'SUCCEEDED', JSON.stringify(run.status_message));
  assert.ok((await outputTexts(hangar, runId)).includes('upload: 201'), 'the upload was accepted');

  const files = (run.artifacts as Array<{ artifact_type: string; data: { artifact_uid: string } }>).filter(
    (artifact) => artifact.artifact_type === 'FILE',
  );
  assert.equal(files.length, 1);
  const artifact = (await hangar.request('GET', `/agent/artifacts/${files[0]!.data.artifact_uid}`)).body;
  const rows = await sql`select * from artifacts where run_id = ${runId}`.execute(hangar.db);
  const stored = JSON.stringify([artifact, rows.rows]);
  assert.ok(!stored.includes(SECRET), `the secret is stored: ${stored}`);
  assert.match(JSON.stringify(artifact), /notes-\[REDACTED:UPLOAD_SECRET\]\.txt/);
  assert.match(JSON.stringify(artifact), /notes holding \[REDACTED:UPLOAD_SECRET\]/);
  assert.match(JSON.stringify(artifact), /reports\/\[REDACTED:UPLOAD_SECRET\]\/notes\.txt/);
});
