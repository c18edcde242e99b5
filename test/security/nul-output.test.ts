import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { conversationBlocks, harnessEnv, script, waitForState } from '../support/engine.js';
import { createRun } from '../support/runs.js';
import { startTestServer, type TestServer } from '../support/server.js';

let hangar: TestServer;
before(async () => (hangar = await startTestServer(harnessEnv())));
after(() => hangar.stop());

/** The raw transcript download, line by line. */
async function rawTranscript(runId: string): Promise<string[]> {
  const link = await fetch(`${hangar.apiUrl}/agent/runs/${runId}/transcript`, {
    headers: { authorization: `Bearer ${hangar.apiKey}` },
    redirect: 'manual',
  });
  assert.equal(link.status, 302, await link.text());
  return (await (await fetch(link.headers.get('location')!)).text()).split('\n');
}

test('NUL bytes in harness output, raw in text and escaped in JSON lines, are stored escaped and lose nothing else', async () => {
  const runId = await createRun(hangar, {
    prompt: script(
      { say: 'before the NULs' },
      // A plain-text line with raw NUL bytes.
      { raw: 'plain\u0000text\u0000' },
      // A protocol line whose JSON string holds NUL (escaped as \u0000 on the wire, a NUL once parsed).
      { emit: { type: 'text', text: 'json\u0000line' } },
      { emit: { type: 'tool_call', id: 'n1', name: 'bash', input: { command: 'printf "\u0000"' } } },
      { emit: { type: 'tool_result', id: 'n1', status: 'completed', output: 'a\u0000b' } },
      { say: 'after the NULs' },
    ),
  });
  const run = await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR');
  assert.equal(run.state, 'SUCCEEDED', JSON.stringify(run.status_message));

  const lines = await rawTranscript(runId);
  const joined = lines.join('\n');
  assert.ok(joined.includes('before the NULs') && joined.includes('after the NULs'), joined);
  assert.ok(lines.includes('plain\\u0000text\\u0000'), `the raw line is kept with its NULs escaped: ${joined}`);
  assert.ok(joined.includes('json\\u0000line'));
  assert.equal(joined.includes('\u0000'), false);

  const texts = (await conversationBlocks(hangar, runId)).map((block) => JSON.stringify(block));
  const all = texts.join('\n');
  for (const expected of ['before the NULs', 'after the NULs', 'json\\\\u0000line', 'a\\\\u0000b']) {
    assert.ok(all.includes(expected), `the conversation lost ${expected}: ${all}`);
  }
});
