/**
 * The shared-link lookups over HTTP, without and with an API key: GET /agent/conversations/{id}/redirect answers
 * `{session_id}` (a string, the run's ID) while the conversation's newest run executes, GET
 * /agent/sessions/{id}/redirect answers `{conversation_id}` (a string) once that run no longer does, and both
 * answer `{}`, the same body, for an unknown ID, for nothing to redirect to and, with a key, for another team's
 * run. Each empty answer counts as a failed authentication of the address: past the limit the address is refused
 * with 429, on these lookups and on API keys alike (this test is last: it blocks the test's address).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { createRun, setRunColumns } from '../support/runs.js';
import { startTestServer, type TestServer } from '../support/server.js';

const LIMIT = 8;
let hangar: TestServer;
let other: { apiKey: string };
let conversationId: string;
let liveRun: string;
let endedConversation: string;
let endedRun: string;

before(async () => {
  hangar = await startTestServer({ HANGAR_AUTH_FAILURES_PER_MINUTE: String(LIMIT) });
  other = await hangar.createTeamWithUser();
  conversationId = randomUUID();
  liveRun = await createRun(hangar, { title: 'secret title' });
  await setRunColumns(hangar, liveRun, { state: 'INPROGRESS', conversation_id: conversationId });
  endedConversation = randomUUID();
  endedRun = await createRun(hangar);
  await setRunColumns(hangar, endedRun, { state: 'SUCCEEDED', conversation_id: endedConversation });
});

after(async () => {
  await hangar?.stop();
});

const conversation = (id: string, apiKey: string | null = null) =>
  hangar.request('GET', `/agent/conversations/${id}/redirect`, { apiKey });
const session = (id: string, apiKey: string | null = null) =>
  hangar.request('GET', `/agent/sessions/${id}/redirect`, { apiKey });

test('a conversation whose newest run executes redirects to its session, a string and nothing else', async () => {
  for (const apiKey of [null, hangar.apiKey]) {
    const answer = await conversation(conversationId, apiKey);
    assert.equal(answer.status, 200);
    assert.deepEqual(Object.keys(answer.body), ['session_id']);
    assert.equal(typeof answer.body.session_id, 'string');
    assert.equal(answer.body.session_id, liveRun);
  }
});

test('a session whose run ended redirects to its conversation, a string and nothing else', async () => {
  for (const apiKey of [null, hangar.apiKey]) {
    const answer = await session(endedRun, apiKey);
    assert.equal(answer.status, 200);
    assert.deepEqual(Object.keys(answer.body), ['conversation_id']);
    assert.equal(typeof answer.body.conversation_id, 'string');
    assert.equal(answer.body.conversation_id, endedConversation);
  }
});

test("unknown, nothing to redirect to and (with a key) another team's all answer the same empty body", async () => {
  const empties = [
    await conversation(randomUUID()),
    await session(randomUUID()),
    // The run is live: no conversation yet. The conversation's run ended: no session.
    await session(liveRun),
    await conversation(endedConversation),
    // Another team's caller learns nothing of this team's runs.
    await conversation(conversationId, other.apiKey),
    await session(endedRun, other.apiKey),
  ];
  for (const answer of empties) {
    assert.equal(answer.status, 200);
    assert.deepEqual(answer.body, {});
    assert.equal(answer.headers.get('content-length'), '2');
  }
});

test('an invalid key is refused as anywhere else', async () => {
  assert.equal((await conversation(conversationId, 'hgr_not-a-key')).status, 401);
});

test('empty answers count as failed authentications: past the limit the address is refused everywhere', async () => {
  let refused: Awaited<ReturnType<typeof conversation>> | undefined;
  let lookups = 0;
  while (!refused && lookups < 3 * LIMIT) {
    const answer = await conversation(randomUUID());
    lookups += 1;
    if (answer.status === 429) refused = answer;
    else assert.deepEqual(answer.body, {});
  }
  assert.ok(refused, 'the lookups were refused at last');
  assert.ok(lookups <= LIMIT + 1, `${lookups} lookups before the refusal`);
  assert.equal(refused.body.error_code, 'resource_unavailable');
  assert.ok(Number(refused.headers.get('retry-after')) > 0);
  // A lookup that would find something is refused too, and so is a request with an API key from the address.
  assert.equal((await session(endedRun)).status, 429);
  assert.equal((await hangar.request('GET', '/agent/runs')).status, 429);
});
