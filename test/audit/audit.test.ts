import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { AUDITED_ROUTES } from '../../src/audit/index.js';
import { createTestDatabase, startTestServer, type TestServer } from '../support/server.js';

// Every audited action, made for real over HTTP, then read back: who (principal and key), from where, what, never
// a secret value; a team's entries are invisible to other teams, and no route changes them.
let hangar: TestServer;
const SECRET_VALUE = 'audit-secret-value-9c1e';

before(async () => {
  hangar = await startTestServer();
});
after(() => hangar?.stop());

async function ok(method: string, path: string, body?: unknown, apiKey?: string): Promise<any> {
  const response = await hangar.request(method, `/api/v1${path}`, {
    ...(body !== undefined ? { body } : {}),
    ...(apiKey ? { apiKey } : {}),
  });
  assert.ok(response.status < 300, `${method} ${path}: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body;
}

async function allEntries(path: string, apiKey?: string): Promise<any[]> {
  const entries: any[] = [];
  let cursor: string | undefined;
  do {
    const page = await ok(
      'GET',
      `${path}${path.includes('?') ? '&' : '?'}limit=7${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      undefined,
      apiKey,
    );
    entries.push(...page.entries);
    cursor = page.page_info.next_cursor;
  } while (cursor);
  return entries;
}

test('every listed change is recorded with who, from where and what, never a value; other teams see none of it', async () => {
  // Instance administration (the bootstrap key is an instance administrator).
  const team = await ok('POST', '/admin/teams', { name: 'audited' });
  const user = await ok('POST', '/admin/users', { display_name: 'Audited User', email: 'a@example.com' });
  await ok('PUT', `/admin/teams/${team.uid}/members/${user.uid}`, { role: 'admin' });
  const key = await ok('POST', '/admin/api-keys', { name: 'ci', user_uid: user.uid });
  await ok('PUT', `/admin/teams/${team.uid}/budget`, { monthly_budget_usd: 100, warn_at_percent: 90 });
  await ok('DELETE', `/admin/teams/${team.uid}/budget`);
  const leaving = await ok('POST', '/admin/users', { display_name: 'Leaving User', email: 'l@example.com' });
  await ok('PUT', `/admin/teams/${team.uid}/members/${leaving.uid}`, { role: 'member' });
  await ok('DELETE', `/admin/teams/${team.uid}/members/${leaving.uid}`);
  // The rest is done by the new team admin, with the new key.
  const apiKey = key.key as string;
  const act = (method: string, path: string, body?: unknown) => ok(method, path, body, apiKey);
  await act('POST', '/secrets', { name: 'DEPLOY_TOKEN', value: SECRET_VALUE });
  await act('PUT', '/secrets/DEPLOY_TOKEN', { value: `${SECRET_VALUE}-2` });
  const agent = await act('POST', '/agent/identities', { name: 'auditor' });
  await act('PUT', `/agent/identities/${agent.uid}`, { name: 'auditor-2' });
  const mcp = await act('POST', '/mcp-servers', {
    name: 'tools',
    command: 'node',
    args: [],
    env: { TOKEN: { secret: 'DEPLOY_TOKEN' } },
  });
  const environment = await act('POST', '/environments', { name: 'env', docker_image: 'ubuntu:24.04' });
  const webhook = await act('POST', '/factory/webhooks', { name: 'hook', auth_mode: 'url_token' });
  await act('PUT', `/factory/webhooks/${webhook.uid}`, { enabled: false });
  await act('PUT', `/factory/webhooks/${webhook.uid}`, { enabled: true });
  const rotated = await act('POST', `/factory/webhooks/${webhook.uid}/rotate`, {});
  const automation = await act('POST', '/factory/automations', {
    name: 'on-hook',
    prompt: 'react',
    triggers: [{ provider: 'webhook', event: 'received', filter: { webhook_ids: [webhook.uid] } }],
  });
  await act('PUT', `/factory/automations/${automation.id}`, {
    name: 'on-hook-2',
    prompt: 'react',
    triggers: [{ provider: 'webhook', event: 'received', filter: { webhook_ids: [webhook.uid] } }],
  });
  await act('DELETE', `/factory/automations/${automation.id}`);
  const schedule = await act('POST', '/agent/schedules', {
    name: 'nightly',
    cron_schedule: '@daily',
    prompt: 'p',
    enabled: false,
  });
  await act('POST', `/agent/schedules/${schedule.id}/pause`);
  const workerKey = await act('POST', '/selfhosted/worker-keys', { name: 'box', worker_id: 'box-1' });
  await act('DELETE', `/selfhosted/worker-keys/${workerKey.uid}`);
  await act('DELETE', `/agent/schedules/${schedule.id}`);
  await act('DELETE', `/factory/webhooks/${webhook.uid}`);
  await act('DELETE', `/environments/${environment.uid}`);
  await act('DELETE', `/mcp-servers/${mcp.uid}`);
  await act('DELETE', `/agent/identities/${agent.uid}`);
  await act('DELETE', '/secrets/DEPLOY_TOKEN');
  await ok('DELETE', `/admin/api-keys/${key.uid}`);
  // A refused change is not recorded.
  assert.equal((await hangar.request('DELETE', '/api/v1/secrets/NOPE')).status, 404);

  const everyone = await allEntries('/admin/audit');
  const teams = await allEntries(`/admin/audit?team_uid=${team.uid}`);
  const actions = teams.map((entry) => entry.action).reverse();
  assert.deepEqual(actions, [
    'membership.set',
    'budget.set',
    'budget.delete',
    'membership.set',
    'membership.delete',
    'secret.create',
    'secret.update',
    'agent.create',
    'agent.update',
    'mcp_server.create',
    'environment.create',
    'webhook.create',
    'webhook.update',
    'webhook.update',
    'webhook.rotate',
    'automation.create',
    'automation.update',
    'automation.delete',
    'schedule.create',
    'schedule.pause',
    'worker_key.create',
    'worker_key.revoke',
    'schedule.delete',
    'webhook.delete',
    'environment.delete',
    'mcp_server.delete',
    'agent.delete',
    'secret.delete',
  ]);
  const instance = everyone.filter((entry) => entry.team_uid === null).map((entry) => entry.action);
  for (const action of ['team.create', 'user.create', 'api_key.create', 'api_key.revoke'])
    assert.ok(instance.includes(action), `${action} not recorded`);
  assert.ok(!everyone.some((entry) => entry.action === 'secret.delete' && entry.target === 'NOPE'));

  // Who, with which key, from where, what.
  const created = teams.find((entry) => entry.action === 'secret.create');
  assert.deepEqual(created.actor, { type: 'user', uid: user.uid });
  assert.equal(created.key_uid, key.uid);
  assert.equal(created.client_address, '127.0.0.1');
  assert.equal(created.target, 'DEPLOY_TOKEN');
  assert.ok(!Number.isNaN(Date.parse(created.at)));
  assert.deepEqual(created.details.changed, ['value']);
  const [disabled, enabled] = teams.filter((entry) => entry.action === 'webhook.update').reverse();
  assert.deepEqual(disabled.details.fields, { enabled: false });
  assert.deepEqual(enabled.details.fields, { enabled: true });
  assert.equal(teams.find((entry) => entry.action === 'membership.delete').target, leaving.uid);
  assert.equal(teams.find((entry) => entry.action === 'agent.create').target, agent.uid);
  // Never a value: not the secret's, not the webhook's, not the new key's.
  const text = JSON.stringify(everyone);
  for (const value of [SECRET_VALUE, webhook.secret, rotated.secret, apiKey])
    assert.ok(!text.includes(value), 'a value is in the log');

  // The team's admin reads the team's log; the default team's admin sees none of it; a member is refused.
  const own = await allEntries('/audit');
  assert.ok(!own.some((entry) => entry.team_uid === team.uid), "another team's entries are visible");
  const member = await hangar.addUser(team.uid, 'member');
  assert.equal((await hangar.request('GET', '/api/v1/audit', { apiKey: member.apiKey })).status, 403);
  const second = await ok('POST', '/admin/api-keys', { name: 'again', user_uid: user.uid });
  const teamView = await allEntries('/audit', second.key);
  assert.deepEqual(
    teamView.map((entry) => entry.id),
    teams.map((entry) => entry.id),
  );
  // Only instance administrators read the whole log.
  assert.equal((await hangar.request('GET', '/api/v1/admin/audit', { apiKey: second.key })).status, 403);
});

test('no route changes or deletes an entry', async () => {
  for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
    for (const path of ['/api/v1/audit', '/api/v1/admin/audit', '/api/v1/audit/1', '/api/v1/admin/audit/1']) {
      const status = (await hangar.request(method, path, { body: {} })).status;
      assert.ok(status === 404 || status === 405, `${method} ${path}: ${status}`);
    }
  }
});

test('every audited route exists', async () => {
  for (const key of Object.keys(AUDITED_ROUTES)) {
    const [method, path] = key.split(' ') as [string, string];
    assert.ok(hangar.server.app.hasRoute({ method, url: `/api/v1${path}` }), `${key} is not a route`);
  }
});

test('a start with changed instance settings records which changed, never their values, once', async () => {
  const database = await createTestDatabase();
  const env = (days: string) => ({ HANGAR_AUDIT_RETENTION_DAYS: days, HANGAR_BOOTSTRAP_API_KEY: hangar.apiKey });
  const changes = async (server: TestServer) =>
    (await server.request('GET', '/api/v1/admin/audit?action=instance.settings_change')).body.entries;
  let server = await startTestServer(env('365'), { database });
  try {
    assert.deepEqual(await changes(server), [], 'the first start has nothing to compare with');
    await server.stop();
    server = await startTestServer(env('4321'), { database });
    const [entry, ...more] = await changes(server);
    assert.equal(more.length, 0);
    assert.equal(entry.team_uid, null);
    assert.deepEqual(entry.actor, { type: 'operator', uid: 'configuration' });
    assert.deepEqual(entry.details, { changed: ['auditRetentionDays'] });
    assert.ok(!JSON.stringify(entry).includes('4321'), 'a value is in the log');
    // The same settings again: nothing new.
    await server.stop();
    server = await startTestServer(env('4321'), { database });
    assert.equal((await changes(server)).length, 1);
  } finally {
    await server.stop();
    await database.drop();
  }
});
