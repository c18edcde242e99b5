/**
 * GET /agent/runs/{id}/handoff/attachments over HTTP: a run created with a file and executed by a real coding-agent
 * CLI (Codex, against its scripted model server) lists the file and the session the CLI kept for the next
 * execution, each behind a signed link that works without a key and only unaltered. The expected shape is the
 * public Oz API's handoff listing: `attachments`, each with string `attachment_id`, `download_url` and `filename`
 * and an optional string `mime_type`. Another team's caller gets the 404 of a run that does not exist.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { missingClis, writeCliOperatorFile } from '../harnesses/scripted-runs.js';
import { waitForState } from '../support/engine.js';
import { OpenAIResponsesServer } from '../support/model-servers/index.js';
import { createRun } from '../support/runs.js';
import { startTestServer, type TestServer } from '../support/server.js';

const skip = missingClis();
const model = new OpenAIResponsesServer();
let hangar: TestServer;
let configDirectory: string | undefined;

before(async () => {
  if (skip) return;
  await model.listen();
  const { directory, file } = writeCliOperatorFile({ claude: model, codex: model, gemini: model }, 'HANDOFF');
  configDirectory = directory;
  hangar = await startTestServer({ HANGAR_CONFIG: file, HANDOFF_OPENAI_KEY: 'operator-key' });
});

after(async () => {
  await hangar?.stop();
  await model.close();
  if (configDirectory) fs.rmSync(configDirectory, { recursive: true, force: true });
});

/** Every field of a listed attachment, typed as the public API describes it. */
function assertAttachmentShape(item: Record<string, unknown>): void {
  assert.equal(typeof item.attachment_id, 'string');
  assert.equal(typeof item.download_url, 'string');
  assert.doesNotThrow(() => new URL(item.download_url as string));
  assert.equal(typeof item.filename, 'string');
  if ('mime_type' in item) assert.equal(typeof item.mime_type, 'string');
  assert.deepEqual(
    Object.keys(item).filter((key) => !['attachment_id', 'download_url', 'filename', 'mime_type'].includes(key)),
    [],
  );
}

describe('handoff attachments', { skip, timeout: 240_000 }, () => {
  let runId: string;

  before(async () => {
    model.script({ text: 'Read the notes.' });
    runId = await createRun(hangar, {
      prompt: 'Read notes.txt',
      config: { harness: { type: 'codex', model_id: 'codex-test' } },
      attachments: [
        { file_name: 'notes.txt', mime_type: 'text/plain', data: Buffer.from('the notes').toString('base64') },
      ],
    });
    assert.equal((await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR')).state, 'SUCCEEDED');
  });

  test('lists the run file and the CLI session of the ended execution, each downloadable without a key', async () => {
    const listed = await hangar.request('GET', `/agent/runs/${runId}/handoff/attachments`);
    assert.equal(listed.status, 200);
    assert.deepEqual(Object.keys(listed.body), ['attachments']);
    assert.ok(Array.isArray(listed.body.attachments));
    for (const item of listed.body.attachments) assertAttachmentShape(item);

    const byId = new Map<string, any>(listed.body.attachments.map((item: any) => [item.attachment_id, item]));
    const notes = byId.get('input-0');
    assert.equal(notes.filename, 'notes.txt');
    assert.equal(notes.mime_type, 'text/plain');
    const file = await fetch(notes.download_url);
    assert.equal(file.status, 200);
    assert.equal(await file.text(), 'the notes');

    const session = byId.get('session-1');
    assert.ok(session, `the CLI's session is listed: ${JSON.stringify(listed.body)}`);
    assert.match(session.filename, /\.jsonl$/);
    assert.equal(session.mime_type, 'application/x-ndjson');
    const sessionFile = await fetch(session.download_url);
    assert.equal(sessionFile.status, 200);
    const lines = (await sessionFile.text()).split('\n').filter((line) => line !== '');
    assert.ok(lines.length > 0);
    for (const line of lines) assert.doesNotThrow(() => JSON.parse(line));
    assert.equal(byId.size, 2);
  });

  test('a link changed in any part is refused', async () => {
    const listed = await hangar.request('GET', `/agent/runs/${runId}/handoff/attachments`);
    const link = new URL(listed.body.attachments.find((item: any) => item.attachment_id === 'input-0').download_url);
    const otherAttachment = new URL(link);
    otherAttachment.pathname = otherAttachment.pathname.replace(/input-0$/, 'session-1');
    const noSignature = new URL(link);
    noSignature.searchParams.delete('signature');
    for (const url of [otherAttachment, noSignature]) assert.equal((await fetch(url)).status, 403, String(url));
  });

  test("another team's caller gets the answer of a run that does not exist", async () => {
    const other = await hangar.createTeamWithUser();
    const theirs = await hangar.request('GET', `/agent/runs/${runId}/handoff/attachments`, { apiKey: other.apiKey });
    const unknown = await hangar.request('GET', `/agent/runs/${crypto.randomUUID()}/handoff/attachments`, {
      apiKey: other.apiKey,
    });
    assert.equal(theirs.status, 404);
    assert.equal(unknown.status, 404);
    assert.equal(theirs.body.error_code, unknown.body.error_code);
    assert.ok(!JSON.stringify(theirs.body).includes('notes.txt'));
    assert.equal(
      (await hangar.request('GET', `/agent/runs/${runId}/handoff/attachments`, { apiKey: null })).status,
      401,
    );
  });
});
