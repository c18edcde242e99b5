import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestServer, type TestServer } from '../support/server.js';

// Issue 52, field 1: a run created `on_behalf_of` a member. Only an agent's API key, only when a team administrator
// turned the agent's on_behalf_of_enabled on, only for a member of the agent's team; the run's creator is then the
// member and its executor the agent. Every refused case is tried for real.
let hangar: TestServer;

before(async () => {
  hangar = await startTestServer({}, { role: 'api' });
});
after(() => hangar.stop());

async function agentWithKey(apiKey: string, onBehalfOf?: boolean) {
  const agent = await hangar.request('POST', '/agent/identities', {
    apiKey,
    body: {
      name: `bot-${Math.random().toString(36).slice(2, 8)}`,
      ...(onBehalfOf === undefined ? {} : { on_behalf_of_enabled: onBehalfOf }),
    },
  });
  assert.equal(agent.status, 201, JSON.stringify(agent.body));
  const key = await hangar.request('POST', '/api/v1/admin/api-keys', {
    body: { name: 'bot', agent_uid: agent.body.uid },
  });
  assert.equal(key.status, 201, JSON.stringify(key.body));
  return { uid: agent.body.uid as string, key: key.body.key as string, item: agent.body };
}

const create = (apiKey: string, body: Record<string, unknown>) =>
  hangar.request('POST', '/agent/runs', { apiKey, body: { prompt: 'for someone', ...body } });

test('an enabled agent creates a run for a member, by user ID or e-mail: creator the member, executor the agent', async () => {
  const team = await hangar.createTeamWithUser();
  const member = await hangar.addUser(team.teamUid, 'member');
  const agent = await agentWithKey(team.apiKey, true);
  assert.equal(agent.item.on_behalf_of_enabled, true);
  const byId = await create(agent.key, { on_behalf_of: member.userUid });
  assert.equal(byId.status, 200, JSON.stringify(byId.body));
  const run = (await hangar.request('GET', `/agent/runs/${byId.body.run_id}`, { apiKey: team.apiKey })).body;
  assert.equal(run.creator.type, 'user');
  assert.equal(run.creator.uid, member.userUid);
  assert.equal(run.executor.type, 'service_account');
  assert.equal(run.executor.uid, agent.uid);

  const email = `member-${member.userUid}@example.test`;
  await hangar.db.updateTable('users').set({ email }).where('uid', '=', member.userUid).execute();
  const byEmail = await create(agent.key, { on_behalf_of: email.toUpperCase() });
  assert.equal(byEmail.status, 200, JSON.stringify(byEmail.body));
  const second = (await hangar.request('GET', `/agent/runs/${byEmail.body.run_id}`, { apiKey: team.apiKey })).body;
  assert.equal(second.creator.uid, member.userUid);
  // The member finds it among the runs they created.
  const mine = await hangar.request('GET', `/agent/runs?creator=${member.userUid}`, { apiKey: member.apiKey });
  assert.ok(mine.body.runs.some((item: { run_id: string }) => item.run_id === byEmail.body.run_id));
});

test("refused: a person's key, an agent without on_behalf_of_enabled, a non-member, another team's member", async () => {
  const team = await hangar.createTeamWithUser();
  const member = await hangar.addUser(team.teamUid, 'member');
  const other = await hangar.createTeamWithUser();

  const asPerson = await create(team.apiKey, { on_behalf_of: member.userUid });
  assert.equal(asPerson.status, 403);
  assert.equal(asPerson.body.error_code, 'not_authorized');

  const plain = await agentWithKey(team.apiKey);
  assert.equal(plain.item.on_behalf_of_enabled, false);
  const notEnabled = await create(plain.key, { on_behalf_of: member.userUid });
  assert.equal(notEnabled.status, 403);
  assert.match(notEnabled.body.detail, /on_behalf_of_enabled/);

  const enabled = await agentWithKey(team.apiKey, true);
  const stranger = await create(enabled.key, { on_behalf_of: other.userUid });
  const nobody = await create(enabled.key, { on_behalf_of: 'nobody@example.test' });
  for (const refused of [stranger, nobody]) {
    assert.equal(refused.status, 403);
    assert.equal(refused.body.error_code, 'not_authorized');
  }
  // The same words for someone of another team and for no one: the answer tells nothing of who exists.
  assert.equal(
    stranger.body.detail.replace(other.userUid, 'X'),
    nobody.body.detail.replace('nobody@example.test', 'X'),
  );
  const both = await create(enabled.key, { on_behalf_of: member.userUid, agent_identity_uid: plain.uid });
  assert.equal(both.status, 400);

  // Turning it off takes effect at once; only administrators may turn it on.
  const off = await hangar.request('PUT', `/agent/identities/${enabled.uid}`, {
    apiKey: team.apiKey,
    body: { on_behalf_of_enabled: false },
  });
  assert.equal(off.status, 200);
  assert.equal(off.body.on_behalf_of_enabled, false);
  assert.equal((await create(enabled.key, { on_behalf_of: member.userUid })).status, 403);
  const byMember = await hangar.request('PUT', `/agent/identities/${enabled.uid}`, {
    apiKey: member.apiKey,
    body: { on_behalf_of_enabled: true },
  });
  assert.equal(byMember.status, 403);
  // No run was created by any refused request.
  const runs = await hangar.db.selectFrom('runs').select('id').where('team_uid', '=', team.teamUid).execute();
  assert.equal(runs.length, 0);
});
