import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { newUid } from '../../src/platform/crypto.js';
import { startTestServer, type TestServer } from '../support/server.js';

// Oz's agent identity (its public OpenAPI document and SDK, read for issue 52 field 7): `agent_type` one of
// FOREMAN, TRIAGE, SPEC, IMPLEMENT, REVIEW, VERIFY or CUSTOM; `harness_auth_secrets` an object naming a team
// secret per harness (claude_auth_secret_name, codex_auth_secret_name); `credential_strategy` CREATOR or
// EXECUTOR, absent when the agent has none, cleared by an empty string on update; `on_behalf_of_enabled` a
// boolean; the list filtered by `factory_uid`; a team's default agent cannot be deleted (400).
let hangar: TestServer;
before(async () => (hangar = await startTestServer({}, { role: 'api' })));
after(() => hangar.stop());

const TYPES = ['FOREMAN', 'TRIAGE', 'SPEC', 'IMPLEMENT', 'REVIEW', 'VERIFY', 'CUSTOM'];

async function secret(apiKey: string, name: string) {
  const response = await hangar.request('POST', '/api/v1/secrets', { apiKey, body: { name, value: 'v' } });
  assert.equal(response.status, 201, JSON.stringify(response.body));
}

describe('agent identities: the fields of Oz (issue 52, field 7)', () => {
  test('agent_type, harness_auth_secrets, credential_strategy and on_behalf_of_enabled, each of its type', async () => {
    const team = await hangar.createTeamWithUser();
    await secret(team.apiKey, 'CLAUDE_KEY');
    const plain = await hangar.request('POST', '/agent/identities', { apiKey: team.apiKey, body: { name: 'plain' } });
    assert.equal(plain.status, 201, JSON.stringify(plain.body));
    assert.equal(plain.body.agent_type, 'CUSTOM');
    assert.equal(plain.body.on_behalf_of_enabled, false);
    assert.equal(plain.body.credential_strategy, undefined);
    assert.equal(plain.body.harness_auth_secrets, undefined);

    for (const agentType of TYPES) {
      const response = await hangar.request('POST', '/agent/identities', {
        apiKey: team.apiKey,
        body: { name: `a-${agentType}`, agent_type: agentType },
      });
      assert.equal(response.status, 201, JSON.stringify(response.body));
      assert.equal(response.body.agent_type, agentType);
    }
    for (const body of [
      { name: 'x', agent_type: 'foreman' },
      { name: 'x', agent_type: 'MANAGER' },
      { name: 'x', credential_strategy: 'OWNER' },
      { name: 'x', harness_auth_secrets: { claude_auth_secret_name: 'NOT_THERE' } },
    ]) {
      const response = await hangar.request('POST', '/agent/identities', { apiKey: team.apiKey, body });
      assert.equal(response.status, 400, JSON.stringify(body));
    }

    const full = await hangar.request('POST', '/agent/identities', {
      apiKey: team.apiKey,
      body: {
        name: 'reviewer',
        agent_type: 'REVIEW',
        credential_strategy: 'CREATOR',
        harness_auth_secrets: { claude_auth_secret_name: 'CLAUDE_KEY' },
        on_behalf_of_enabled: true,
      },
    });
    assert.equal(full.status, 201, JSON.stringify(full.body));
    assert.equal(full.body.credential_strategy, 'CREATOR');
    assert.deepEqual(full.body.harness_auth_secrets, { claude_auth_secret_name: 'CLAUDE_KEY' });
    assert.equal(full.body.on_behalf_of_enabled, true);
    assert.deepEqual(
      (await hangar.request('GET', `/agent/identities/${full.body.uid}`, { apiKey: team.apiKey })).body,
      full.body,
    );

    // Omitted or null: unchanged; empty: cleared.
    const unchanged = await hangar.request('PUT', `/agent/identities/${full.body.uid}`, {
      apiKey: team.apiKey,
      body: { credential_strategy: null, harness_auth_secrets: null, agent_type: null },
    });
    assert.equal(unchanged.status, 200, JSON.stringify(unchanged.body));
    assert.equal(unchanged.body.credential_strategy, 'CREATOR');
    assert.equal(unchanged.body.agent_type, 'REVIEW');
    assert.deepEqual(unchanged.body.harness_auth_secrets, { claude_auth_secret_name: 'CLAUDE_KEY' });
    const cleared = await hangar.request('PUT', `/agent/identities/${full.body.uid}`, {
      apiKey: team.apiKey,
      body: { credential_strategy: '', harness_auth_secrets: {}, agent_type: 'VERIFY', on_behalf_of_enabled: false },
    });
    assert.equal(cleared.status, 200, JSON.stringify(cleared.body));
    assert.equal(cleared.body.credential_strategy, undefined);
    assert.equal(cleared.body.harness_auth_secrets, undefined);
    assert.equal(cleared.body.agent_type, 'VERIFY');
    assert.equal(cleared.body.on_behalf_of_enabled, false);
  });

  test("the list's factory_uid filter, and a factory's foreman cannot be deleted", async () => {
    const team = await hangar.createTeamWithUser();
    const other = await hangar.createTeamWithUser();
    const factories = [newUid(), newUid()];
    for (const uid of factories)
      await hangar.db
        .insertInto('factories')
        .values({ uid, team_uid: team.teamUid, name: `f-${uid}` })
        .execute();
    const [foreman, worker, loose] = ['foreman', 'worker', 'loose'];
    const made: Record<string, string> = {};
    for (const [name, factory] of [
      [foreman, factories[0]],
      [worker, factories[1]],
      [loose, null],
    ] as const) {
      const response = await hangar.request('POST', '/agent/identities', { apiKey: team.apiKey, body: { name } });
      made[name] = response.body.uid;
      if (factory)
        await hangar.db
          .updateTable('agent_identities')
          .set({ factory_uid: factory, ...(name === foreman ? { agent_type: 'FOREMAN' } : {}) })
          .where('uid', '=', response.body.uid)
          .execute();
    }
    const names = async (query: string, apiKey = team.apiKey) =>
      (await hangar.request('GET', `/agent/identities${query}`, { apiKey })).body.agents
        .map((agent: { name: string }) => agent.name)
        .sort();
    assert.deepEqual(await names(''), [foreman, loose, worker]);
    assert.deepEqual(await names(`?factory_uid=${factories[0]}`), [foreman]);
    assert.deepEqual(await names(`?factory_uid=${factories[0]}&factory_uid=${factories[1]}`), [foreman, worker]);
    assert.deepEqual(await names(`?factory_uid=${factories[0]}`, other.apiKey), [], "another team's sees none");

    const refused = await hangar.request('DELETE', `/agent/identities/${made[foreman]}`, { apiKey: team.apiKey });
    assert.equal(refused.status, 400);
    assert.match(refused.body.detail, /foreman/);
    assert.equal(
      (await hangar.request('GET', `/agent/identities/${made[foreman]}`, { apiKey: team.apiKey })).status,
      200,
    );
    assert.equal(
      (await hangar.request('DELETE', `/agent/identities/${made[worker]}`, { apiKey: team.apiKey })).status,
      204,
    );
  });
});
