/**
 * `hangar runs handoff` (the run's handoff files, listed and saved) and `hangar runs redirect` (the shared-link
 * lookups) over a real server.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { hangarCli } from '../support/cli.js';
import { createRun, setRunColumns } from '../support/runs.js';
import { startTestServer, type TestServer } from '../support/server.js';

let hangar: TestServer;
const cli = (...args: string[]) => hangarCli(args, { url: hangar.url, apiKey: hangar.apiKey });
const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-handoff-'));

async function ok(...args: string[]): Promise<string> {
  const result = await cli(...args);
  assert.equal(result.code, 0, `${args.join(' ')}: ${result.stderr}`);
  return result.stdout;
}

before(async () => {
  hangar = await startTestServer({}, { role: 'api' });
});
after(async () => {
  await hangar.stop();
  fs.rmSync(directory, { recursive: true, force: true });
});

test('hangar runs handoff lists the files with their links, and --save downloads them', async () => {
  const runId = await createRun(hangar, {
    attachments: [
      { file_name: 'notes.txt', mime_type: 'text/plain', data: Buffer.from('hand me on').toString('base64') },
    ],
  });
  const listed = await ok('runs', 'handoff', runId);
  assert.match(listed, /input-0\s+notes\.txt\s+text\/plain\s+http/);
  const json = JSON.parse(await ok('runs', 'handoff', runId, '--json'));
  assert.equal(json.attachments[0].filename, 'notes.txt');
  const saved = await ok('runs', 'handoff', runId, '--save', directory);
  assert.match(saved, /saved .*input-0-notes\.txt/);
  assert.equal(fs.readFileSync(path.join(directory, 'input-0-notes.txt'), 'utf8'), 'hand me on');
  assert.match(await ok('runs', 'handoff', await createRun(hangar)), /Nothing to hand off/);
});

test('hangar runs redirect answers the other ID, or says there is none', async () => {
  const conversationId = randomUUID();
  const live = await createRun(hangar);
  await setRunColumns(hangar, live, { state: 'INPROGRESS', conversation_id: conversationId });
  assert.match(await ok('runs', 'redirect', '--conversation', conversationId), new RegExp(`Live session: run ${live}`));
  assert.match(await ok('runs', 'redirect', '--session', live), /No conversation/);
  await setRunColumns(hangar, live, { state: 'SUCCEEDED' });
  assert.match(await ok('runs', 'redirect', '--session', live), new RegExp(`Conversation: ${conversationId}`));
  assert.match(await ok('runs', 'redirect', '--conversation', randomUUID()), /No live session/);
  const both = await cli('runs', 'redirect');
  assert.notEqual(both.code, 0);
  assert.match(both.stderr, /exactly one of --conversation and --session/);
});
