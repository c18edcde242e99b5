import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { hangarCli } from '../support/cli.js';
import { addEnvironment, createRun } from '../support/runs.js';
import { startTestServer, type TestServer } from '../support/server.js';

let hangar: TestServer;
// A plan of two agents per team, so the limit is easy to reach.
before(async () => (hangar = await startTestServer({ HANGAR_PLAN_MAX_AGENTS: '2' }, { role: 'api' })));
after(() => hangar.stop());

async function createAgent(body: Record<string, unknown>, apiKey?: string) {
  const response = await hangar.request('POST', '/agent/identities', { body, apiKey });
  assert.equal(response.status, 201, JSON.stringify(response.body));
  return response.body;
}

async function keyFor(agentUid: string): Promise<{ uid: string; key: string }> {
  const response = await hangar.request('POST', '/api/v1/admin/api-keys', {
    body: { name: 'bot', agent_uid: agentUid },
  });
  assert.equal(response.status, 201);
  return response.body;
}

describe('agent identities', () => {
  test('create, get, list, update and delete', async () => {
    const team = await hangar.createTeamWithUser();
    const environment = await addEnvironment(hangar, team.teamUid);
    const missingSecret = await hangar.request('POST', '/agent/identities', {
      apiKey: team.apiKey,
      body: { name: 'x', secrets: [{ name: 'NPM_TOKEN' }] },
    });
    assert.equal(missingSecret.status, 400);
    assert.match(missingSecret.body.detail, /NPM_TOKEN/);
    assert.equal(
      (
        await hangar.request('POST', '/api/v1/secrets', {
          apiKey: team.apiKey,
          body: { name: 'NPM_TOKEN', value: 's3cret' },
        })
      ).status,
      201,
    );
    const created = await createAgent(
      {
        name: 'Release bot',
        description: 'Cuts releases',
        prompt: 'Follow RELEASING.md',
        environment_id: environment,
        base_model: 'claude-sonnet-4',
        skills: ['acme/ops:skills/release/SKILL.md'],
        secrets: [{ name: 'NPM_TOKEN' }],
        harness: { type: 'claude' },
      },
      team.apiKey,
    );
    assert.match(created.uid, /^[A-Za-z0-9]{22}$/);
    assert.equal(created.available, true);
    assert.equal(created.environment_id, environment);
    assert.deepEqual(created.secrets, [{ name: 'NPM_TOKEN' }]);
    assert.ok(created.created_at && created.updated_at);
    assert.deepEqual(
      (await hangar.request('GET', `/agent/identities/${created.uid}`, { apiKey: team.apiKey })).body,
      created,
    );
    const list = await hangar.request('GET', '/agent/identities', { apiKey: team.apiKey });
    assert.deepEqual(
      list.body.agents.map((agent: { uid: string }) => agent.uid),
      [created.uid],
    );

    // Omitted or null: unchanged; empty: cleared.
    const updated = await hangar.request('PUT', `/agent/identities/${created.uid}`, {
      apiKey: team.apiKey,
      body: { name: 'Releaser', description: null, prompt: '', skills: [], harness: {} },
    });
    assert.equal(updated.status, 200);
    assert.equal(updated.body.name, 'Releaser');
    assert.equal(updated.body.description, 'Cuts releases');
    assert.equal(updated.body.prompt, undefined);
    assert.deepEqual(updated.body.skills, []);
    assert.equal(updated.body.harness, undefined);
    assert.equal(updated.body.base_model, 'claude-sonnet-4');

    const deleted = await hangar.request('DELETE', `/agent/identities/${created.uid}`, { apiKey: team.apiKey });
    assert.equal(deleted.status, 204);
    assert.equal(
      (await hangar.request('GET', `/agent/identities/${created.uid}`, { apiKey: team.apiKey })).status,
      404,
    );
    assert.equal(
      (await hangar.request('DELETE', `/agent/identities/${created.uid}`, { apiKey: team.apiKey })).status,
      404,
    );
  });

  test('validation, permissions and isolation', async () => {
    const team = await hangar.createTeamWithUser();
    assert.equal((await hangar.request('POST', '/agent/identities', { apiKey: team.apiKey, body: {} })).status, 400);
    assert.equal(
      (
        await hangar.request('POST', '/agent/identities', {
          apiKey: team.apiKey,
          body: { name: 'x', harness: { type: 'cursor' } },
        })
      ).status,
      400,
    );
    const foreignEnvironment = await addEnvironment(hangar);
    assert.equal(
      (
        await hangar.request('POST', '/agent/identities', {
          apiKey: team.apiKey,
          body: { name: 'x', environment_id: foreignEnvironment },
        })
      ).status,
      403,
    );
    const member = await hangar.addUser(team.teamUid, 'member');
    assert.equal(
      (await hangar.request('POST', '/agent/identities', { apiKey: member.apiKey, body: { name: 'x' } })).status,
      403,
    );
    const agent = await createAgent({ name: 'Mine' }, team.apiKey);
    assert.equal(
      (await hangar.request('GET', `/agent/identities/${agent.uid}`, { apiKey: member.apiKey })).status,
      200,
      'members can look',
    );
    assert.equal(
      (await hangar.request('DELETE', `/agent/identities/${agent.uid}`, { apiKey: member.apiKey })).status,
      403,
    );
    const stranger = await hangar.createTeamWithUser();
    assert.equal(
      (await hangar.request('GET', `/agent/identities/${agent.uid}`, { apiKey: stranger.apiKey })).status,
      404,
    );
    assert.equal(
      (await hangar.request('PUT', `/agent/identities/${agent.uid}`, { apiKey: stranger.apiKey, body: { name: 'y' } }))
        .status,
      404,
    );
    assert.deepEqual((await hangar.request('GET', '/agent/identities', { apiKey: stranger.apiKey })).body.agents, []);
    const delegated = await hangar.request('POST', '/agent/runs', {
      apiKey: stranger.apiKey,
      body: { prompt: 'x', agent_identity_uid: agent.uid },
    });
    assert.equal(delegated.status, 403);
  });

  test('the oldest agents up to the plan limit are available; the rest cannot execute runs', async () => {
    const team = await hangar.createTeamWithUser();
    const first = await createAgent({ name: 'first' }, team.apiKey);
    const second = await createAgent({ name: 'second' }, team.apiKey);
    const third = await createAgent({ name: 'third' }, team.apiKey);
    assert.deepEqual([first.available, second.available, third.available], [true, true, false]);
    const listed = (await hangar.request('GET', '/agent/identities', { apiKey: team.apiKey })).body.agents;
    assert.deepEqual(
      listed.map((agent: { name: string; available: boolean }) => [agent.name, agent.available]),
      [
        ['first', true],
        ['second', true],
        ['third', false],
      ],
    );

    const thirdKey = await keyFor(third.uid);
    const own = await hangar.request('POST', '/agent/runs', { apiKey: thirdKey.key, body: { prompt: 'x' } });
    assert.equal(own.status, 403);
    const delegated = await hangar.request('POST', '/agent/runs', {
      apiKey: team.apiKey,
      body: { prompt: 'x', agent_identity_uid: third.uid },
    });
    assert.equal(delegated.status, 403);

    await hangar.request('DELETE', `/agent/identities/${first.uid}`, { apiKey: team.apiKey });
    assert.equal(
      (await hangar.request('GET', `/agent/identities/${third.uid}`, { apiKey: team.apiKey })).body.available,
      true,
    );
    assert.equal(
      (await hangar.request('POST', '/agent/runs', { apiKey: thirdKey.key, body: { prompt: 'x' } })).status,
      200,
    );
  });

  test("an agent's key runs as the agent; a user may delegate; both filters work", async () => {
    const team = await hangar.createTeamWithUser();
    const agent = await createAgent({ name: 'Worker' }, team.apiKey);
    const { key } = await keyFor(agent.uid);
    const byAgent = await createRun(hangar, { prompt: 'agent run' }, key);
    const delegated = await createRun(hangar, { prompt: 'delegated', agent_identity_uid: agent.uid }, team.apiKey);
    const byUser = await createRun(hangar, { prompt: 'user run' }, team.apiKey);

    const run = (await hangar.request('GET', `/agent/runs/${byAgent}`, { apiKey: team.apiKey })).body;
    assert.deepEqual(run.creator, { type: 'service_account', uid: agent.uid, display_name: 'Worker' });
    assert.deepEqual(run.executor, run.creator);
    const delegatedRun = (await hangar.request('GET', `/agent/runs/${delegated}`, { apiKey: key })).body;
    assert.equal(delegatedRun.creator.uid, team.userUid);
    assert.equal(delegatedRun.executor.uid, agent.uid);

    const ids = async (query: string) =>
      (await hangar.request('GET', `/agent/runs?${query}`, { apiKey: team.apiKey })).body.runs
        .map((r: { run_id: string }) => r.run_id)
        .sort();
    assert.deepEqual(await ids(`executor=${agent.uid}`), [byAgent, delegated].sort());
    assert.deepEqual(await ids(`creator=${agent.uid}`), [byAgent]);
    assert.deepEqual(await ids(`creator=${team.userUid}`), [delegated, byUser].sort());
    assert.equal(
      (await hangar.request('GET', '/agent/runs', { apiKey: key, headers: { 'x-team-uid': hangar.teamUid } })).status,
      403,
    );
  });

  test('deleting an agent deletes its keys at once', async () => {
    const team = await hangar.createTeamWithUser();
    const agent = await createAgent({ name: 'Short-lived' }, team.apiKey);
    const keys = [await keyFor(agent.uid), await keyFor(agent.uid)];
    for (const { key } of keys) assert.equal((await hangar.request('GET', '/agent/runs', { apiKey: key })).status, 200);
    assert.equal(
      (await hangar.request('DELETE', `/agent/identities/${agent.uid}`, { apiKey: team.apiKey })).status,
      204,
    );
    for (const { key } of keys) assert.equal((await hangar.request('GET', '/agent/runs', { apiKey: key })).status, 401);
    const remaining = await hangar.db.selectFrom('api_keys').select('uid').where('agent_uid', '=', agent.uid).execute();
    assert.deepEqual(remaining, []);
  });

  test('the agents CLI verbs', async () => {
    const env = { url: hangar.url, apiKey: hangar.apiKey };
    assert.equal(
      (await hangar.request('POST', '/api/v1/secrets', { body: { name: 'TOKEN', value: 'v' } })).status,
      201,
    );
    const created = await hangarCli(
      [
        'agents',
        'create',
        '--name',
        'Cli bot',
        '--model',
        'claude-sonnet-4',
        '--skill',
        'a:b',
        '--secret',
        'TOKEN',
        '--json',
      ],
      env,
    );
    assert.equal(created.code, 0, created.stderr);
    const agent = JSON.parse(created.stdout);
    assert.deepEqual(
      [agent.base_model, agent.skills, agent.secrets],
      ['claude-sonnet-4', ['a:b'], [{ name: 'TOKEN' }]],
    );
    assert.match((await hangarCli(['agents', 'list'], env)).stdout, /Cli bot/);
    const updated = JSON.parse(
      (await hangarCli(['agents', 'update', agent.uid, '--description', 'does things', '--json'], env)).stdout,
    );
    assert.equal(updated.description, 'does things');
    assert.equal(JSON.parse((await hangarCli(['agents', 'get', agent.uid, '--json'], env)).stdout).uid, agent.uid);
    assert.equal((await hangarCli(['agents', 'delete', agent.uid], env)).code, 0);
    assert.notEqual((await hangarCli(['agents', 'get', agent.uid], env)).code, 0);
  });
});
