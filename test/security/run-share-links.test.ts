/**
 * Runs' share links (config.session_sharing), attacked for real over HTTP: the link's secret is the only thing that
 * opens a run without a key, it opens that run and nothing else, only as far as its level allows, and never again
 * once revoked or once its run is gone. A wrong secret is one 404 and a failed authentication of the address: past
 * the limit the address is refused with 429 (the last test: it blocks the test's address).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { SHARE_SECRET_PREFIX } from '../../src/runs/sharing/secret.js';
import { addArtifact, createRun, setRunColumns } from '../support/runs.js';
import { startTestServer, type TestServer } from '../support/server.js';

const LIMIT = 40;
const HEADER = 'x-hangar-share-secret';
let hangar: TestServer;

before(async () => {
  hangar = await startTestServer({ HANGAR_AUTH_FAILURES_PER_MINUTE: String(LIMIT) });
});

after(async () => {
  await hangar?.stop();
});

/** Creates a shared run as `apiKey` and answers its ID and its link's secret (what follows `#` in the URL). */
async function sharedRun(access: 'VIEWER' | 'EDITOR', apiKey = hangar.apiKey, extra: Record<string, unknown> = {}) {
  const created = await hangar.request('POST', '/agent/runs', {
    apiKey,
    body: { prompt: `shared ${access}`, config: { session_sharing: { public_access: access }, ...extra } },
  });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  const link = created.body.session_sharing;
  assert.equal(link.public_access, access);
  assert.equal(typeof link.url, 'string');
  const [page, secret] = (link.url as string).split('#') as [string, string];
  assert.equal(page, `${hangar.url}/shared/run`);
  assert.ok(secret.startsWith(SHARE_SECRET_PREFIX));
  return { runId: created.body.run_id as string, secret };
}

const asLink = (secret: string, path = '', method = 'GET', body?: unknown) =>
  hangar.request(method, `/api/v1/shared/run${path}`, { apiKey: null, headers: { [HEADER]: secret }, body });

test('a VIEWER link opens its run, its page without configuration, metadata, e-mails or artifact IDs', async () => {
  const { runId, secret } = await sharedRun('VIEWER', hangar.apiKey, {
    mcp_servers: { api: { url: 'https://mcp.example.com/', headers: { Authorization: 'Bearer mcp-secret' } } },
  });
  await addArtifact(hangar, runId, 'PULL_REQUEST');
  const page = await asLink(secret);
  assert.equal(page.status, 200);
  assert.equal(page.body.run_id, runId);
  assert.equal(page.body.public_access, 'VIEWER');
  assert.equal(page.body.prompt, 'shared VIEWER');
  const text = JSON.stringify(page.body);
  for (const leak of ['mcp-secret', 'mcp.example.com', 'agent_config', 'metadata', 'email', 'artifact_uid', '@'])
    assert.ok(!text.includes(leak), `the shared page shows ${leak}`);
  assert.deepEqual(page.body.artifacts, [
    {
      artifact_type: 'PULL_REQUEST',
      created_at: page.body.artifacts[0].created_at,
      url: 'https://example.com/pr/1',
      branch: 'fix',
    },
  ]);
  const timeline = await asLink(secret, '/timeline');
  assert.equal(timeline.status, 200);
  assert.ok(timeline.body.events.every((event: { run_id: string }) => event.run_id === runId));
  // No conversation yet: 404 as for a team member.
  assert.equal((await asLink(secret, '/conversation')).status, 404);
});

test('the run detail shows the link (never its URL) and its owners see it; the secret is stored hashed', async () => {
  const { runId, secret } = await sharedRun('EDITOR');
  const detail = await hangar.request('GET', `/agent/runs/${runId}`);
  assert.equal(detail.body.session_sharing.public_access, 'EDITOR');
  assert.equal(detail.body.session_sharing.url, undefined);
  assert.deepEqual(detail.body.agent_config.session_sharing, { public_access: 'EDITOR' });
  const current = await hangar.request('GET', `/agent/runs/${runId}/sharing`);
  assert.equal(current.status, 200);
  assert.equal(current.body.url, undefined);
  const rows = await hangar.db.selectFrom('run_share_links').selectAll().where('run_id', '=', runId).execute();
  assert.equal(rows.length, 1);
  assert.ok(!JSON.stringify(rows).includes(secret.slice(SHARE_SECRET_PREFIX.length)));
});

test('guessing: well-formed and malformed secrets that are no link get one 404, with no run in it', async () => {
  const { secret } = await sharedRun('VIEWER');
  const guesses = [
    `${SHARE_SECRET_PREFIX}${'A'.repeat(40)}`,
    `${secret.slice(0, -1)}${secret.endsWith('A') ? 'B' : 'A'}`,
    secret.toLowerCase(),
    'hgr_not-a-share-secret',
    '',
  ];
  for (const guess of guesses) {
    const answer = await asLink(guess);
    assert.equal(answer.status, 404);
    assert.equal(answer.body.error_code, 'resource_not_found');
    assert.ok(!JSON.stringify(answer.body).includes('shared VIEWER'));
  }
  const without = await hangar.request('GET', '/api/v1/shared/run', { apiKey: null });
  assert.equal(without.status, 404);
  // An API key is no share secret.
  assert.equal((await asLink(hangar.apiKey)).status, 404);
});

test('VIEWER trying a follow-up is 403 and nothing reaches the run', async () => {
  const { runId, secret } = await sharedRun('VIEWER');
  const answer = await asLink(secret, '/followups', 'POST', { message: 'rm -rf /' });
  assert.equal(answer.status, 403);
  assert.equal(answer.body.error_code, 'not_authorized');
  const inputs = await hangar.db.selectFrom('run_inputs').select('message').where('run_id', '=', runId).execute();
  assert.ok(inputs.every((input) => input.message !== 'rm -rf /'));
});

test("an EDITOR link's follow-up reaches the run, recorded as made through the link, and audited", async () => {
  const { runId, secret } = await sharedRun('EDITOR');
  const answer = await asLink(secret, '/followups', 'POST', { message: 'also fix the tests' });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  assert.deepEqual(answer.body, {});
  const inputs = await hangar.db.selectFrom('run_inputs').select('message').where('run_id', '=', runId).execute();
  assert.ok(inputs.some((input) => input.message === 'also fix the tests'));
  const timeline = await hangar.request('GET', `/agent/runs/${runId}/timeline`);
  const received = timeline.body.events.filter(
    (event: { event_type: string }) => event.event_type === 'followup_received',
  );
  assert.equal(received.at(-1).payload.via, 'shared_link');
  const audit = await hangar.request('GET', '/api/v1/audit?action=run.followup');
  assert.equal(audit.status, 200, JSON.stringify(audit.body));
  const entry = audit.body.entries.find((e: { target: string }) => e.target === runId);
  assert.equal(entry.actor.type, 'shared_link');
  const created = await hangar.request('GET', '/api/v1/audit?action=run.share.create');
  const made = created.body.entries.find((e: { target: string }) => e.target === runId);
  assert.equal(made.actor.uid, hangar.userUid);
  assert.equal(typeof made.client_address, 'string');
  assert.deepEqual(made.details.fields, { public_access: 'EDITOR' });
  assert.ok(!JSON.stringify(audit.body).includes(secret) && !JSON.stringify(created.body).includes(secret));
});

test('a revoked link opens nothing; a new one works and the old one stays dead', async () => {
  const { runId, secret } = await sharedRun('EDITOR');
  const revoked = await hangar.request('DELETE', `/agent/runs/${runId}/sharing`);
  assert.equal(revoked.status, 200);
  for (const path of ['', '/timeline', '/conversation']) assert.equal((await asLink(secret, path)).status, 404);
  assert.equal((await asLink(secret, '/followups', 'POST', { message: 'after revoke' })).status, 404);
  assert.equal((await hangar.request('GET', `/agent/runs/${runId}/sharing`)).status, 404);
  const audit = await hangar.request('GET', '/api/v1/audit?action=run.share.revoke');
  assert.ok(audit.body.entries.some((e: { target: string }) => e.target === runId));

  const again = await hangar.request('PUT', `/agent/runs/${runId}/sharing`, { body: { public_access: 'VIEWER' } });
  assert.equal(again.status, 200);
  const fresh = (again.body.url as string).split('#')[1]!;
  assert.equal((await asLink(fresh)).body.public_access, 'VIEWER');
  assert.equal((await asLink(secret)).status, 404);
  // Sharing again replaces the link: the previous one stops working.
  const third = await hangar.request('PUT', `/agent/runs/${runId}/sharing`, { body: { public_access: 'EDITOR' } });
  assert.equal((await asLink(fresh)).status, 404);
  assert.equal((await asLink((third.body.url as string).split('#')[1]!)).body.public_access, 'EDITOR');
});

test("a link of team A never reaches team B's run, and team B cannot see or revoke A's link", async () => {
  const other = await hangar.createTeamWithUser();
  const theirs = await createRun(hangar, { prompt: 'team B secret plan' }, other.apiKey);
  const { runId, secret } = await sharedRun('EDITOR');
  // The link opens its own run whatever else the request says.
  const page = await hangar.request('GET', `/api/v1/shared/run?run_id=${theirs}`, {
    apiKey: null,
    headers: { [HEADER]: secret },
  });
  assert.equal(page.body.run_id, runId);
  // With the link's secret on team B's run routes: no key, so 401; with B's key, A's run is unknown.
  assert.equal(
    (await hangar.request('GET', `/agent/runs/${theirs}`, { apiKey: null, headers: { [HEADER]: secret } })).status,
    401,
  );
  assert.equal((await hangar.request('GET', `/agent/runs/${runId}/sharing`, { apiKey: other.apiKey })).status, 404);
  assert.equal((await hangar.request('DELETE', `/agent/runs/${runId}/sharing`, { apiKey: other.apiKey })).status, 404);
  assert.equal(
    (
      await hangar.request('PUT', `/agent/runs/${runId}/sharing`, {
        apiKey: other.apiKey,
        body: { public_access: 'EDITOR' },
      })
    ).status,
    404,
  );
  // A link row pointing at B's run under A's team opens nothing.
  await hangar.db.updateTable('run_share_links').set({ run_id: theirs }).where('run_id', '=', runId).execute();
  assert.equal((await asLink(secret)).status, 404);
  assert.equal((await asLink(secret, '/followups', 'POST', { message: 'into team B' })).status, 404);
});

test("only the run's creator or a team administrator shares it or revokes its link", async () => {
  const member = await hangar.addUser(hangar.teamUid, 'member');
  const another = await hangar.addUser(hangar.teamUid, 'member');
  const { runId } = await sharedRun('VIEWER', member.apiKey);
  const refused = await hangar.request('DELETE', `/agent/runs/${runId}/sharing`, { apiKey: another.apiKey });
  assert.equal(refused.status, 403);
  assert.equal(
    (
      await hangar.request('PUT', `/agent/runs/${runId}/sharing`, {
        apiKey: another.apiKey,
        body: { public_access: 'EDITOR' },
      })
    ).status,
    403,
  );
  // Any member who sees the run sees the link's state.
  assert.equal((await hangar.request('GET', `/agent/runs/${runId}/sharing`, { apiKey: another.apiKey })).status, 200);
  assert.equal((await hangar.request('DELETE', `/agent/runs/${runId}/sharing`)).status, 200);
});

test("an EDITOR link steers nothing once the run's creator has left the team", async () => {
  const member = await hangar.addUser(hangar.teamUid, 'member');
  const { runId, secret } = await sharedRun('EDITOR', member.apiKey);
  const removed = await hangar.request('DELETE', `/api/v1/admin/teams/${hangar.teamUid}/members/${member.userUid}`);
  assert.equal(removed.status, 204, JSON.stringify(removed.body));
  const answer = await asLink(secret, '/followups', 'POST', { message: 'after leaving' });
  assert.equal(answer.status, 403);
  const inputs = await hangar.db.selectFrom('run_inputs').select('message').where('run_id', '=', runId).execute();
  assert.ok(inputs.every((input) => input.message !== 'after leaving'));
});

test('a link is dead once its run is deleted', async () => {
  const { runId, secret } = await sharedRun('EDITOR');
  assert.equal((await asLink(secret)).status, 200);
  await setRunColumns(hangar, runId, { state: 'SUCCEEDED', ended_at: new Date() });
  await hangar.db.deleteFrom('runs').where('id', '=', runId).execute();
  assert.equal((await asLink(secret)).status, 404);
  assert.equal((await asLink(secret, '/followups', 'POST', { message: 'still there?' })).status, 404);
  const rows = await hangar.db.selectFrom('run_share_links').select('id').where('run_id', '=', runId).execute();
  assert.equal(rows.length, 0);
});

test('session_sharing.public_access takes VIEWER and EDITOR only', async () => {
  for (const bad of ['viewer', 'OWNER', '', 1, null]) {
    const answer = await hangar.request('POST', '/agent/runs', {
      body: { prompt: 'x', config: { session_sharing: { public_access: bad } } },
    });
    assert.equal(answer.status, 400, `public_access ${JSON.stringify(bad)}`);
  }
  const missing = await hangar.request('POST', '/agent/runs', {
    body: { prompt: 'x', config: { session_sharing: {} } },
  });
  assert.equal(missing.status, 400);
  const plain = await hangar.request('POST', '/agent/runs', { body: { prompt: 'x' } });
  assert.equal(plain.body.session_sharing, undefined);
});

test('guessing past the limit is refused with 429, the right secret included', async () => {
  const { secret } = await sharedRun('VIEWER');
  let last: Awaited<ReturnType<typeof asLink>> | undefined;
  for (let attempt = 0; attempt < LIMIT + 2; attempt++) {
    last = await asLink(`${SHARE_SECRET_PREFIX}${String(attempt).padStart(40, 'x')}`);
    if (last.status === 429) break;
  }
  assert.equal(last?.status, 429);
  assert.ok(Number(last?.headers.get('retry-after')) > 0);
  assert.equal((await asLink(secret)).status, 429);
});
