import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestServer, type TestServer } from '../support/server.js';

let hangar: TestServer;
before(async () => (hangar = await startTestServer({}, { role: 'api' })));
after(() => hangar.stop());

const api = (method: string, path: string, options: { body?: unknown; apiKey?: string | null } = {}) =>
  hangar.request(method, `/api/v1${path}`, options);

async function createWebhook(body: Record<string, unknown>, apiKey?: string) {
  const response = await api('POST', '/factory/webhooks', { body, apiKey });
  assert.equal(response.status, 201, JSON.stringify(response.body));
  return response.body;
}

describe('webhook management', () => {
  test('create issues a token secret once; reads never show it', async () => {
    const created = await createWebhook({ name: 'deploys' });
    assert.match(created.uid, /^[A-Za-z0-9]{22}$/);
    assert.equal(created.auth_mode, 'token');
    assert.equal(created.enabled, true);
    assert.equal(created.signature_scheme, null);
    assert.match(created.secret, /^[A-Za-z0-9_-]{40,}$/);
    assert.equal(created.url, `${hangar.url}/webhooks/w/${created.uid}`);
    const read = await api('GET', `/factory/webhooks/${created.uid}`);
    assert.equal(read.status, 200);
    assert.equal(read.body.secret, undefined);
    const { secret: _shownOnce, ...shown } = created;
    assert.deepEqual(read.body, shown);
    const listed = await api('GET', '/factory/webhooks');
    assert.ok(
      listed.body.webhooks.some(
        (item: { uid: string; secret?: string }) => item.uid === created.uid && item.secret === undefined,
      ),
    );
    const factories = await api('GET', '/factory/factories');
    assert.equal(factories.status, 200);
    const defaultFactory = factories.body.factories.find((factory: { is_default: boolean }) => factory.is_default);
    assert.equal(created.factory_uid, defaultFactory.uid);
  });

  test('url_token: URL-safe secret inside the URL at creation, a placeholder afterwards', async () => {
    const created = await createWebhook({ name: 'url-token', auth_mode: 'url_token' });
    assert.match(created.secret, /^[A-Za-z0-9\-._~]+$/);
    assert.equal(created.url, `${hangar.url}/webhooks/w/${created.uid}/${created.secret}`);
    assert.equal(
      (await api('GET', `/factory/webhooks/${created.uid}`)).body.url,
      `${hangar.url}/webhooks/w/${created.uid}/{token}`,
    );
  });

  test('signature: Standard Webhooks secrets are generated when blank; providers that issue their own need one', async () => {
    const standard = await createWebhook({
      name: 'std',
      auth_mode: 'signature',
      signature_scheme: 'standard_webhooks',
    });
    assert.match(standard.secret, /^whsec_[A-Za-z0-9+/]+=*$/);
    const github = await createWebhook({
      name: 'gh',
      auth_mode: 'signature',
      signature_scheme: 'github',
      secret: 'my-github-secret',
    });
    assert.equal(github.secret, 'my-github-secret');
    const stripe = await api('POST', '/factory/webhooks', {
      body: { name: 'stripe', auth_mode: 'signature', signature_scheme: 'stripe' },
    });
    assert.equal(stripe.status, 400);
    assert.match(stripe.body.detail, /stripe issues the signing secret/);
    const noScheme = await api('POST', '/factory/webhooks', { body: { name: 'x', auth_mode: 'signature' } });
    assert.equal(noScheme.status, 400);
    assert.match(noScheme.body.detail, /signature_scheme/);
    const tokenWithSecret = await api('POST', '/factory/webhooks', { body: { name: 'y', secret: 'chosen-by-me' } });
    assert.equal(tokenWithSecret.status, 400);
    const badScheme = await api('POST', '/factory/webhooks', {
      body: { name: 'z', auth_mode: 'signature', signature_scheme: 'bitbucket' },
    });
    assert.equal(badScheme.status, 400);
  });

  test('secret_name must name an existing team secret, and is never shown', async () => {
    const missing = await api('POST', '/factory/webhooks', { body: { name: 'named', secret_name: 'NOPE' } });
    assert.equal(missing.status, 400);
    assert.match(missing.body.detail, /NOPE/);
    assert.equal(
      (await api('POST', '/secrets', { body: { name: 'HOOK_TOKEN', value: 'team-managed-token' } })).status,
      201,
    );
    const created = await createWebhook({ name: 'named', secret_name: 'HOOK_TOKEN' });
    assert.equal(created.secret, undefined);
    assert.equal(created.secret_name, 'HOOK_TOKEN');
    const both = await api('POST', '/factory/webhooks', {
      body: {
        name: 'both',
        auth_mode: 'signature',
        signature_scheme: 'github',
        secret: 'abcdefgh',
        secret_name: 'HOOK_TOKEN',
      },
    });
    assert.equal(both.status, 400);
    const rotate = await api('POST', `/factory/webhooks/${created.uid}/rotate`);
    assert.equal(rotate.status, 409);
    assert.match(rotate.body.detail, /HOOK_TOKEN/);
  });

  test('names are unique per factory; unknown webhooks are 404', async () => {
    await createWebhook({ name: 'unique-name' });
    assert.equal((await api('POST', '/factory/webhooks', { body: { name: 'unique-name' } })).status, 409);
    assert.equal((await api('GET', '/factory/webhooks/AAAAAAAAAAAAAAAAAAAAAA')).status, 404);
    assert.equal(
      (await api('PUT', '/factory/webhooks/AAAAAAAAAAAAAAAAAAAAAA', { body: { enabled: false } })).status,
      404,
    );
    assert.equal((await api('DELETE', '/factory/webhooks/AAAAAAAAAAAAAAAAAAAAAA')).status, 404);
    assert.equal(
      (await api('POST', '/factory/webhooks', { body: { name: 'in-nowhere', factory_uid: 'AAAAAAAAAAAAAAAAAAAAAA' } }))
        .status,
      404,
    );
  });

  test('at most 20 webhooks per factory, also under concurrent creates', async () => {
    const factory = await api('POST', '/factory/factories', { body: { name: 'limits' } });
    assert.equal(factory.status, 201, JSON.stringify(factory.body));
    const attempts = await Promise.all(
      Array.from({ length: 25 }, (_, i) =>
        api('POST', '/factory/webhooks', { body: { name: `hook-${i}`, factory_uid: factory.body.uid } }),
      ),
    );
    assert.equal(attempts.filter((response) => response.status === 201).length, 20);
    const refused = attempts.filter((response) => response.status !== 201);
    assert.ok(refused.every((response) => response.status === 400 && /at most 20/.test(response.body.detail)));
    const listed = await api('GET', `/factory/webhooks?factory_uid=${factory.body.uid}`);
    assert.equal(listed.body.webhooks.length, 20);
  });

  test('update: disable, rename, clear the delivery header; changing the mode issues a new secret', async () => {
    const created = await createWebhook({ name: 'to-edit', delivery_id_header: 'X-Event-Id' });
    const disabled = await api('PUT', `/factory/webhooks/${created.uid}`, { body: { enabled: false, name: 'edited' } });
    assert.equal(disabled.status, 200);
    assert.equal(disabled.body.enabled, false);
    assert.equal(disabled.body.name, 'edited');
    assert.equal(disabled.body.delivery_id_header, 'X-Event-Id');
    assert.equal(disabled.body.secret, undefined);
    const cleared = await api('PUT', `/factory/webhooks/${created.uid}`, { body: { delivery_id_header: null } });
    assert.equal(cleared.body.delivery_id_header, null);
    const switched = await api('PUT', `/factory/webhooks/${created.uid}`, {
      body: { auth_mode: 'signature', signature_scheme: 'standard_webhooks' },
    });
    assert.equal(switched.status, 200);
    assert.match(switched.body.secret, /^whsec_/);
    const back = await api('PUT', `/factory/webhooks/${created.uid}`, { body: { auth_mode: 'token' } });
    assert.equal(back.body.signature_scheme, null);
    assert.ok(back.body.secret);
  });

  test('rotate issues a new secret; delete answers 204 and then 404', async () => {
    const created = await createWebhook({ name: 'rotating' });
    const rotated = await api('POST', `/factory/webhooks/${created.uid}/rotate`);
    assert.equal(rotated.status, 200, JSON.stringify(rotated.body));
    assert.ok(rotated.body.secret && rotated.body.secret !== created.secret);
    assert.equal((await api('DELETE', `/factory/webhooks/${created.uid}`)).status, 204);
    assert.equal((await api('GET', `/factory/webhooks/${created.uid}`)).status, 404);
  });

  test('managing webhooks needs the team admin role; members may read', async () => {
    const created = await createWebhook({ name: 'admins-only' });
    const member = await hangar.addUser(hangar.teamUid, 'member');
    for (const [method, path, body] of [
      ['POST', '/factory/webhooks', { name: 'by-member' }],
      ['PUT', `/factory/webhooks/${created.uid}`, { enabled: false }],
      ['POST', `/factory/webhooks/${created.uid}/rotate`, undefined],
      ['DELETE', `/factory/webhooks/${created.uid}`, undefined],
    ] as const) {
      const response = await api(method, path, { body, apiKey: member.apiKey });
      assert.equal(response.status, 403, `${method} ${path}`);
      assert.equal(response.body.error_code, 'not_authorized');
    }
    assert.equal((await api('GET', `/factory/webhooks/${created.uid}`, { apiKey: member.apiKey })).status, 200);
  });

  test("another team never sees this team's webhooks or deliveries", async () => {
    const created = await createWebhook({ name: 'private' });
    const other = await hangar.createTeamWithUser();
    assert.equal((await api('GET', `/factory/webhooks/${created.uid}`, { apiKey: other.apiKey })).status, 404);
    assert.equal(
      (await api('GET', `/factory/webhooks/${created.uid}/deliveries`, { apiKey: other.apiKey })).status,
      404,
    );
    assert.equal((await api('DELETE', `/factory/webhooks/${created.uid}`, { apiKey: other.apiKey })).status, 404);
    const listed = await api('GET', '/factory/webhooks', { apiKey: other.apiKey });
    assert.deepEqual(listed.body.webhooks, []);
  });
});
