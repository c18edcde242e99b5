import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestServer, type TestServer } from '../support/server.js';

let hangar: TestServer;
before(async () => (hangar = await startTestServer({}, { role: 'api' })));
after(() => hangar.stop());

const api = (method: string, path: string, options: { body?: unknown; apiKey?: string | null } = {}) =>
  hangar.request(method, `/api/v1${path}`, options);

async function create(name: string, value = 'v', apiKey?: string) {
  const response = await api('POST', '/secrets', { body: { name, value }, apiKey });
  assert.equal(response.status, 201, JSON.stringify(response.body));
  return response.body;
}

const readValue = (name: string, teamUid = hangar.teamUid) =>
  hangar.server.services.secrets.readSecretValue(teamUid, name);

describe('team secrets API', () => {
  test('create answers 201 with the name and timestamps, never the value', async () => {
    const item = await create('GITHUB_TOKEN', 'ghp_created-value');
    assert.deepEqual(Object.keys(item).sort(), ['created_at', 'name', 'updated_at']);
    assert.equal(item.name, 'GITHUB_TOKEN');
    assert.match(item.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.equal(item.updated_at, item.created_at);
    assert.equal(await readValue('GITHUB_TOKEN'), 'ghp_created-value');
  });

  test('list gives names and timestamps only, sorted by name', async () => {
    await create('zeta');
    await create('Alpha');
    await create('_private');
    const response = await api('GET', '/secrets');
    assert.equal(response.status, 200);
    const names = response.body.secrets.map((item: { name: string }) => item.name);
    assert.deepEqual(
      names,
      [...names].sort((a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)),
    );
    for (const name of ['zeta', 'Alpha', '_private']) assert.ok(names.includes(name), name);
    for (const item of response.body.secrets)
      assert.deepEqual(Object.keys(item).sort(), ['created_at', 'name', 'updated_at']);
  });

  test('PUT replaces the value and moves updated_at; DELETE removes the secret', async () => {
    const created = await create('ROTATED', 'old value');
    // Not a wait for an event: the clock must move for updated_at to.
    await new Promise((resolve) => setTimeout(resolve, 5));
    const updated = await api('PUT', '/secrets/ROTATED', { body: { value: 'new value' } });
    assert.equal(updated.status, 200);
    assert.deepEqual(Object.keys(updated.body).sort(), ['created_at', 'name', 'updated_at']);
    assert.equal(updated.body.created_at, created.created_at);
    assert.ok(updated.body.updated_at > created.updated_at);
    assert.equal(await readValue('ROTATED'), 'new value');

    const deleted = await api('DELETE', '/secrets/ROTATED');
    assert.equal(deleted.status, 204);
    assert.equal(deleted.body, undefined);
    assert.equal(await readValue('ROTATED'), null);
    const names = (await api('GET', '/secrets')).body.secrets.map((item: { name: string }) => item.name);
    assert.ok(!names.includes('ROTATED'));
  });

  test('unknown names give 404, a taken name 409', async () => {
    assert.equal((await api('PUT', '/secrets/NOPE', { body: { value: 'x' } })).body.error_code, 'resource_not_found');
    assert.equal((await api('PUT', '/secrets/NOPE', { body: { value: 'x' } })).status, 404);
    assert.equal((await api('DELETE', '/secrets/NOPE')).status, 404);
    await create('TAKEN', 'first');
    const again = await api('POST', '/secrets', { body: { name: 'TAKEN', value: 'second' } });
    assert.equal(again.status, 409);
    assert.equal(again.body.error_code, 'conflict');
    assert.match(again.body.detail, /TAKEN/);
    assert.equal(await readValue('TAKEN'), 'first', 'a refused create leaves the value alone');
  });

  test('names: 1-128 of [A-Za-z0-9_.-], starting with a letter or underscore', async () => {
    for (const name of ['a', '_', 'Z9', 'a.b-c_1', `x${'y'.repeat(127)}`]) await create(name);
    for (const name of ['', '1abc', '-a', '.a', 'a b', 'a/b', 'é', 'a$', `x${'y'.repeat(128)}`]) {
      const response = await api('POST', '/secrets', { body: { name, value: 'v' } });
      assert.equal(response.status, 400, name);
      assert.equal(response.body.error_code, 'invalid_request');
      assert.match(response.body.detail, /name/);
    }
    assert.equal((await api('PUT', '/secrets/1abc', { body: { value: 'v' } })).status, 400);
    assert.equal((await api('DELETE', '/secrets/a%20b')).status, 400);
  });

  test('values: 1 byte to 64 KiB of UTF-8; other fields are refused', async () => {
    await create('BIG', 'a'.repeat(64 * 1024));
    assert.equal((await readValue('BIG'))!.length, 64 * 1024);
    const cases: Array<[unknown, RegExp]> = [
      [{ name: 'V1', value: '' }, /value/],
      [{ name: 'V2', value: 'a'.repeat(64 * 1024 + 1) }, /value/],
      [{ name: 'V3', value: 'é'.repeat(32 * 1024 + 1) }, /65536 bytes/],
      [{ name: 'V4' }, /value/],
      [{ name: 'V5', value: 42 }, /value/],
      [{ value: 'x' }, /name/],
      [{ name: 'V6', value: 'x', extra: true }, /extra/],
    ];
    for (const [body, reason] of cases) {
      const response = await api('POST', '/secrets', { body });
      assert.equal(response.status, 400, JSON.stringify(body).slice(0, 80));
      assert.match(response.body.detail, reason);
    }
    assert.equal((await api('PUT', '/secrets/BIG', { body: { value: '' } })).status, 400);
    assert.equal((await api('PUT', '/secrets/BIG', { body: { value: 'é'.repeat(32 * 1024 + 1) } })).status, 400);
    assert.equal((await readValue('BIG'))!.length, 64 * 1024);
  });

  test('members may list; creating, changing and deleting needs the team admin role', async () => {
    await create('ADMIN_ONLY', 'admin value');
    const member = await hangar.addUser(hangar.teamUid, 'member');
    const list = await api('GET', '/secrets', { apiKey: member.apiKey });
    assert.equal(list.status, 200);
    assert.ok(list.body.secrets.some((item: { name: string }) => item.name === 'ADMIN_ONLY'));
    for (const [method, path, body] of [
      ['POST', '/secrets', { name: 'BY_MEMBER', value: 'x' }],
      ['PUT', '/secrets/ADMIN_ONLY', { value: 'changed' }],
      ['DELETE', '/secrets/ADMIN_ONLY', undefined],
    ] as const) {
      const response = await api(method, path, { body, apiKey: member.apiKey });
      assert.equal(response.status, 403, `${method} ${path}`);
      assert.equal(response.body.error_code, 'not_authorized');
    }
    assert.equal(await readValue('ADMIN_ONLY'), 'admin value');
    assert.equal(await readValue('BY_MEMBER'), null);
  });

  test("another team neither sees nor touches a team's secrets, and may use the same names", async () => {
    await create('SHARED_NAME', 'team one');
    const other = await hangar.createTeamWithUser();
    const list = await api('GET', '/secrets', { apiKey: other.apiKey });
    assert.deepEqual(list.body, { secrets: [] });
    assert.equal(
      (await api('PUT', '/secrets/SHARED_NAME', { body: { value: 'hijacked' }, apiKey: other.apiKey })).status,
      404,
    );
    assert.equal((await api('DELETE', '/secrets/SHARED_NAME', { apiKey: other.apiKey })).status, 404);
    await create('SHARED_NAME', 'team two', other.apiKey);
    assert.equal(await readValue('SHARED_NAME'), 'team one');
    assert.equal(await readValue('SHARED_NAME', other.teamUid), 'team two');
    assert.deepEqual(
      (await api('GET', '/secrets', { apiKey: other.apiKey })).body.secrets.map((item: { name: string }) => item.name),
      ['SHARED_NAME'],
    );
  });

  test('every route needs an API key', async () => {
    for (const [method, path] of [
      ['GET', '/secrets'],
      ['POST', '/secrets'],
      ['PUT', '/secrets/A'],
      ['DELETE', '/secrets/A'],
    ]) {
      const response = await api(method!, path!, {
        apiKey: null,
        body: method === 'POST' || method === 'PUT' ? { name: 'A', value: 'v' } : undefined,
      });
      assert.equal(response.status, 401, `${method} ${path}`);
    }
  });

  test('the routes are in the OpenAPI document, with no value in any response schema', async () => {
    const document = (await hangar.request('GET', '/api/v1/openapi.json', { apiKey: null })).body;
    assert.ok(document.paths['/secrets'].post && document.paths['/secrets'].get);
    assert.ok(document.paths['/secrets/{name}'].put && document.paths['/secrets/{name}'].delete);
    const listItem =
      document.paths['/secrets'].get.responses['200'].content['application/json'].schema.properties.secrets.items;
    assert.deepEqual(Object.keys(listItem.properties).sort(), ['created_at', 'name', 'updated_at']);
  });
});
