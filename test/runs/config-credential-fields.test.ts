/**
 * A run's config.credential_strategy and config.computer_use_model_id over HTTP, each field's type and enum values:
 * credential_strategy is CREATOR or EXECUTOR (or null, for "not chosen"), resolved run -> executing agent ->
 * EXECUTOR and recorded in the run's agent_config; computer_use_model_id is a string of 1 to 200 characters, recorded
 * and returned as given.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestServer, type TestServer } from '../support/server.js';

let hangar: TestServer;

before(async () => {
  hangar = await startTestServer();
});

after(async () => {
  await hangar?.stop();
});

const create = (body: Record<string, unknown>) =>
  hangar.request('POST', '/agent/runs', { body: { prompt: 'fields', ...body } });

async function recordedConfig(body: Record<string, unknown>) {
  const created = await create(body);
  assert.equal(created.status, 200, JSON.stringify(created.body));
  const detail = await hangar.request('GET', `/agent/runs/${created.body.run_id}`);
  assert.equal(detail.status, 200);
  return detail.body.agent_config as Record<string, unknown>;
}

test('credential_strategy takes CREATOR and EXECUTOR, records them, and defaults to EXECUTOR', async () => {
  for (const strategy of ['CREATOR', 'EXECUTOR'] as const) {
    const config = await recordedConfig({ config: { credential_strategy: strategy } });
    assert.equal(config.credential_strategy, strategy);
  }
  assert.equal((await recordedConfig({})).credential_strategy, 'EXECUTOR');
  assert.equal((await recordedConfig({ config: { credential_strategy: null } })).credential_strategy, 'EXECUTOR');
});

test('credential_strategy refuses any other value with 400', async () => {
  for (const bad of ['creator', 'OWNER', '', 1, true, {}]) {
    const answer = await create({ config: { credential_strategy: bad } });
    assert.equal(answer.status, 400, `credential_strategy ${JSON.stringify(bad)}`);
    assert.equal(answer.body.error_code, 'invalid_request');
  }
});

test("a run that names none takes its agent's credential_strategy; its own wins", async () => {
  const agent = await hangar.request('POST', '/agent/identities', {
    body: { name: 'creator-agent', credential_strategy: 'CREATOR' },
  });
  assert.equal(agent.status, 201, JSON.stringify(agent.body));
  const uid = agent.body.uid as string;
  assert.equal((await recordedConfig({ agent_identity_uid: uid })).credential_strategy, 'CREATOR');
  assert.equal(
    (await recordedConfig({ agent_identity_uid: uid, config: { credential_strategy: 'EXECUTOR' } }))
      .credential_strategy,
    'EXECUTOR',
  );
  const plain = await hangar.request('POST', '/agent/identities', { body: { name: 'plain-agent' } });
  assert.equal((await recordedConfig({ agent_identity_uid: plain.body.uid })).credential_strategy, 'EXECUTOR');
});

test('computer_use_model_id is a string of 1 to 200 characters, recorded and returned', async () => {
  const config = await recordedConfig({ config: { computer_use_model_id: 'claude-computer-use' } });
  assert.equal(config.computer_use_model_id, 'claude-computer-use');
  assert.equal(typeof config.computer_use_model_id, 'string');
  assert.equal(
    (await recordedConfig({ config: { computer_use_model_id: 'm'.repeat(200) } })).computer_use_model_id,
    'm'.repeat(200),
  );
  for (const bad of ['', 'm'.repeat(201), 7, null, ['a']]) {
    const answer = await create({ config: { computer_use_model_id: bad } });
    assert.equal(answer.status, 400, `computer_use_model_id ${JSON.stringify(bad).slice(0, 20)}`);
  }
  assert.equal((await recordedConfig({})).computer_use_model_id, undefined);
});

test('the OpenAPI document describes the three fields with their enum values', async () => {
  const document = await hangar.request('GET', '/api/v1/openapi.json', { apiKey: null });
  assert.equal(document.status, 200);
  const text = JSON.stringify(document.body);
  for (const name of ['credential_strategy', 'computer_use_model_id', 'session_sharing', 'public_access'])
    assert.ok(text.includes(`"${name}"`), name);
  const paths = document.body.paths as Record<string, Record<string, unknown>>;
  assert.ok(paths['/api/v1/agent/runs/{runId}/sharing']?.put ?? paths['/agent/runs/{runId}/sharing']?.put);
  assert.ok(paths['/api/v1/shared/run'] ?? paths['/shared/run']);
});
