/**
 * A share link's conversation is its own run's part only: a run that continues another run's conversation
 * (conversation_id) shows through its link what it said, none of the earlier run's words, and not the conversation's
 * ID (which would name the other runs). With a key, the team still sees the whole conversation.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { harnessEnv, script, waitForState } from '../support/engine.js';
import { createRun } from '../support/runs.js';
import { startTestServer, type TestServer } from '../support/server.js';

let hangar: TestServer;

before(async () => {
  hangar = await startTestServer(harnessEnv());
});

after(async () => {
  await hangar?.stop();
});

test("the link shows its run's part of the conversation, without the earlier run or the conversation's ID", async () => {
  const first = await createRun(hangar, { prompt: script({ say: 'the private first answer' }, { done: 'first' }) });
  const firstRun = await waitForState(hangar, first, 'SUCCEEDED', 'FAILED', 'ERROR');
  assert.equal(firstRun.state, 'SUCCEEDED', JSON.stringify(firstRun.status_message));
  const conversationId = firstRun.conversation_id as string;
  assert.ok(conversationId);

  const created = await hangar.request('POST', '/agent/runs', {
    body: {
      prompt: script({ say: 'the shared second answer' }, { done: 'second' }),
      conversation_id: conversationId,
      config: { session_sharing: { public_access: 'VIEWER' } },
    },
  });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  const second = created.body.run_id as string;
  assert.equal((await waitForState(hangar, second, 'SUCCEEDED', 'FAILED', 'ERROR')).state, 'SUCCEEDED');
  const secret = (created.body.session_sharing.url as string).split('#')[1]!;

  const shared = await hangar.request('GET', '/api/v1/shared/run/conversation', {
    apiKey: null,
    headers: { 'x-hangar-share-secret': secret },
  });
  assert.equal(shared.status, 200, JSON.stringify(shared.body));
  const text = JSON.stringify(shared.body);
  assert.ok(text.includes('the shared second answer'));
  assert.ok(!text.includes('the private first answer'), 'the earlier run of the conversation shows');
  assert.ok(!text.includes(conversationId), "the conversation's ID shows");
  assert.equal(shared.body.conversation_id, undefined);

  const whole = await hangar.request('GET', `/agent/runs/${second}/conversation`);
  assert.ok(JSON.stringify(whole.body).includes('the private first answer'));
});
