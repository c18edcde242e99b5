import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestServer, type TestServer } from '../support/server.js';

// Every name a slice keeps unique answers a taken name with the same 409: status, code and words.
let hangar: TestServer;
before(async () => (hangar = await startTestServer({}, { role: 'api' })));
after(() => hangar.stop());

const api = (method: string, path: string, body?: unknown) => hangar.request(method, `/api/v1${path}`, { body });

async function created(method: string, path: string, body: unknown) {
  const response = await api(method, path, body);
  assert.ok(response.status === 200 || response.status === 201, JSON.stringify(response.body));
  return response.body;
}

async function assertConflict(method: string, path: string, body: unknown, detail: string) {
  const response = await api(method, path, body);
  assert.equal(response.status, 409, JSON.stringify(response.body));
  assert.equal(response.body.error_code, 'conflict');
  assert.equal(response.body.detail, detail);
  assert.equal(response.body.retryable, false);
}

describe('unique names answer 409', () => {
  test('teams and users (instance administration)', async () => {
    await created('POST', '/admin/teams', { name: 'taken-team' });
    await assertConflict('POST', '/admin/teams', { name: ' taken-team ' }, 'a team named "taken-team" already exists');
    const user = { display_name: 'Ada', email: 'taken@example.com' };
    await created('POST', '/admin/users', user);
    await assertConflict('POST', '/admin/users', user, 'a user with email taken@example.com already exists');
  });

  test('scorers, secrets and MCP servers of a team', async () => {
    const scorer = { name: 'taken', rubric: 'x', labels: [{ label: 'a', score: 1 }], passing_score: 1 };
    await created('POST', '/agent/scorers', scorer);
    await assertConflict('POST', '/agent/scorers', scorer, 'a scorer named "taken" exists in this team');
    await created('POST', '/secrets', { name: 'TAKEN', value: 'v' });
    await assertConflict(
      'POST',
      '/secrets',
      { name: 'TAKEN', value: 'w' },
      'a secret named TAKEN already exists; change its value with `hangar secrets set TAKEN` (PUT /secrets/TAKEN)',
    );
    await created('POST', '/mcp-servers', { name: 'taken', command: 'x' });
    const other = await created('POST', '/mcp-servers', { name: 'free', command: 'x' });
    const detail = 'this team already has an MCP server named taken';
    await assertConflict('POST', '/mcp-servers', { name: 'taken', command: 'y' }, detail);
    await assertConflict('PUT', `/mcp-servers/${other.uid}`, { name: 'taken', command: 'y' }, detail);
  });

  test('factories, and webhooks and automations in a factory', async () => {
    await created('POST', '/factory/factories', { name: 'taken' });
    await assertConflict(
      'POST',
      '/factory/factories',
      { name: 'taken' },
      'this team already has a factory named taken',
    );
    const hook = await created('POST', '/factory/webhooks', { name: 'taken' });
    const otherHook = await created('POST', '/factory/webhooks', { name: 'free' });
    await assertConflict(
      'POST',
      '/factory/webhooks',
      { name: 'taken' },
      'factory default already has a webhook named taken',
    );
    await assertConflict(
      'PUT',
      `/factory/webhooks/${otherHook.uid}`,
      { name: 'taken' },
      'this factory already has a webhook named taken',
    );
    const automation = {
      name: 'taken',
      prompt: 'p',
      triggers: [{ provider: 'webhook', event: 'received', filter: { webhook_ids: [hook.uid] } }],
    };
    await created('POST', '/factory/automations', automation);
    const otherAutomation = await created('POST', '/factory/automations', { ...automation, name: 'free' });
    await assertConflict(
      'POST',
      '/factory/automations',
      automation,
      'factory default already has an automation named taken',
    );
    await assertConflict(
      'PUT',
      `/factory/automations/${otherAutomation.id}`,
      { name: 'taken' },
      'this factory already has an automation named taken',
    );
  });
});
