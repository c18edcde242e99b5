import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { startTestServer, type TestServer } from '../support/server.js';
import { createWebhook, deliver, deliveryLog, signers } from '../support/webhooks.js';

// Limits raised: this file is about authentication and identity; limits.test.ts covers the limits themselves.
let hangar: TestServer;
before(
  async () =>
    (hangar = await startTestServer(
      { HANGAR_WEBHOOK_RATE_PER_MINUTE: '100000', HANGAR_WEBHOOK_AUTH_FAILURES_PER_MINUTE: '100000' },
      { role: 'api' },
    )),
);
after(() => hangar.stop());

const body = () => JSON.stringify({ action: 'opened', id: randomUUID() });
const bearer = (secret: string) => ({ authorization: `Bearer ${secret}` });

describe('webhook ingress', () => {
  test('token mode: 202 with the delivery ID once committed; a bad or missing token is 401 and logged', async () => {
    const hook = await createWebhook(hangar, { name: 'token' });
    const accepted = await deliver(hook.url, body(), { ...bearer(hook.secret), 'x-service-delivery-id': 'evt-1' });
    assert.equal(accepted.status, 202);
    assert.deepEqual(accepted.body, { delivery_id: 'evt-1' });
    const wrong = await deliver(hook.url, body(), bearer('not-the-secret'));
    assert.equal(wrong.status, 401);
    assert.equal(wrong.body.error_code, 'authentication_required');
    assert.equal((await deliver(hook.url, body())).status, 401);
    const log = await deliveryLog(hangar, hook.uid);
    assert.deepEqual(
      log.map((entry) => entry.status),
      ['Rejected (auth)', 'Rejected (auth)', 'Accepted'],
    );
    const stored = await hangar.request('GET', `/api/v1/factory/webhooks/${hook.uid}/deliveries/evt-1`);
    assert.equal(stored.status, 200);
    assert.equal(stored.body.status, 'Accepted');
    assert.equal(stored.body.payload.action, 'opened');
  });

  test('url_token mode: the token is the last path segment', async () => {
    const hook = await createWebhook(hangar, { name: 'url-token', auth_mode: 'url_token' });
    assert.equal((await deliver(hook.url, body())).status, 202);
    const bare = hook.url.slice(0, hook.url.lastIndexOf('/'));
    assert.equal((await deliver(bare, body(), bearer(hook.secret))).status, 401);
    assert.equal((await deliver(`${bare}/wrong-token`, body())).status, 401);
  });

  for (const scheme of ['github', 'stripe', 'standard_webhooks', 'sentry', 'pagerduty', 'vercel'] as const) {
    test(`signature mode, ${scheme}: signed by the provider's package, verified over the raw bytes`, async () => {
      const secret = scheme === 'standard_webhooks' ? undefined : `${scheme}-signing-secret`;
      const hook = await createWebhook(hangar, {
        name: `sig-${scheme}`,
        auth_mode: 'signature',
        signature_scheme: scheme,
        ...(secret ? { secret } : {}),
      });
      // Bytes that re-serialising would change: spacing, key order, escapes, non-ASCII.
      const raw = `{ "b": 1,  "a": "caf\\u00e9 ☕", "id": "${randomUUID()}" }`;
      const headers = await signers[scheme]!(raw, hook.secret);
      const accepted = await deliver(hook.url, raw, headers);
      assert.equal(accepted.status, 202, JSON.stringify(accepted.body));
      const tampered = raw.replace('"b": 1', '"b": 2');
      assert.equal((await deliver(hook.url, tampered, headers)).status, 401);
      const otherSecret =
        scheme === 'standard_webhooks' ? `whsec_${Buffer.alloc(24, 7).toString('base64')}` : 'some-other-secret';
      assert.equal((await deliver(hook.url, raw, await signers[scheme]!(raw, otherSecret))).status, 401);
      assert.equal((await deliver(hook.url, raw)).status, 401);
    });
  }

  test('Standard Webhooks: svix-* headers are accepted; signatures older than 5 minutes are rejected; a replay is a Duplicate', async () => {
    const hook = await createWebhook(hangar, {
      name: 'std-replay',
      auth_mode: 'signature',
      signature_scheme: 'standard_webhooks',
    });
    const raw = body();
    assert.equal((await deliver(hook.url, raw, await signers.svix!(raw, hook.secret))).status, 202);
    const expired = await deliver(
      hook.url,
      raw,
      await signers.standard_webhooks!(raw, hook.secret, { at: new Date(Date.now() - 6 * 60_000) }),
    );
    assert.equal(expired.status, 401);
    assert.match(expired.body.detail, /5 minutes/);
    const headers = await signers.standard_webhooks!(raw, hook.secret, { id: 'msg_replayed' });
    const first = await deliver(hook.url, raw, headers);
    const replay = await deliver(hook.url, raw, headers);
    assert.equal(first.status, 202);
    assert.equal(replay.status, 202);
    assert.deepEqual(replay.body, { delivery_id: 'msg_replayed' });
    const log = await deliveryLog(hangar, hook.uid);
    assert.deepEqual(
      log.filter((entry) => entry.delivery_id === 'msg_replayed').map((entry) => entry.status),
      ['Duplicate', 'Accepted'],
    );
    // Deleting the webhook drops its replay keys (a trigger: the store is shared with the GitHub App's webhook).
    const keys = () =>
      hangar.db.selectFrom('webhook_replay_keys').select('replay_key').where('webhook_uid', '=', hook.uid).execute();
    assert.ok((await keys()).length > 0);
    assert.equal((await hangar.request('DELETE', `/api/v1/factory/webhooks/${hook.uid}`)).status, 204);
    assert.deepEqual(await keys(), []);
  });

  test('Stripe: signatures older than 5 minutes are rejected', async () => {
    const hook = await createWebhook(hangar, {
      name: 'stripe-age',
      auth_mode: 'signature',
      signature_scheme: 'stripe',
      secret: 'whsec_stripe_test_secret',
    });
    const raw = body();
    assert.equal(
      (await deliver(hook.url, raw, await signers.stripe!(raw, hook.secret, { at: new Date(Date.now() - 4 * 60_000) })))
        .status,
      202,
    );
    const old = await deliver(
      hook.url,
      raw,
      await signers.stripe!(raw, hook.secret, { at: new Date(Date.now() - 6 * 60_000) }),
    );
    assert.equal(old.status, 401);
  });

  test('identity: configured header, then the provider header, then X-Service-Delivery-Id, then the body hash', async () => {
    const hook = await createWebhook(hangar, {
      name: 'identity',
      auth_mode: 'signature',
      signature_scheme: 'github',
      secret: 'identity-secret',
      delivery_id_header: 'X-Event-Id',
    });
    const raw = body();
    const signed = await signers.github!(raw, hook.secret, { id: 'gh-delivery' });
    assert.deepEqual(
      (await deliver(hook.url, raw, { ...signed, 'x-event-id': 'configured', 'x-service-delivery-id': 'svc' })).body,
      { delivery_id: 'configured' },
    );
    assert.deepEqual((await deliver(hook.url, raw, { ...signed, 'x-service-delivery-id': 'svc' })).body, {
      delivery_id: 'gh-delivery',
    });
    const plain = await createWebhook(hangar, { name: 'identity-plain' });
    assert.deepEqual(
      (await deliver(plain.url, raw, { ...bearer(plain.secret), 'x-service-delivery-id': 'svc' })).body,
      { delivery_id: 'svc' },
    );
    const hashed = await deliver(plain.url, raw, bearer(plain.secret));
    assert.match(hashed.body.delivery_id, /^sha256:[0-9a-f]{64}$/);
    const again = await deliver(plain.url, raw, bearer(plain.secret));
    assert.equal(again.body.delivery_id, hashed.body.delivery_id);
    const log = await deliveryLog(hangar, plain.uid);
    assert.equal(log[0]!.status, 'Duplicate');
  });

  test('100 concurrent identical deliveries: exactly one Accepted, the rest Duplicate, all 202', async () => {
    const hook = await createWebhook(hangar, { name: 'concurrent' });
    const raw = body();
    const responses = await Promise.all(
      Array.from({ length: 100 }, () =>
        deliver(hook.url, raw, { ...bearer(hook.secret), 'x-service-delivery-id': 'same-event' }),
      ),
    );
    assert.ok(responses.every((response) => response.status === 202));
    const log = await deliveryLog(hangar, hook.uid);
    assert.equal(log.length, 100);
    assert.equal(log.filter((entry) => entry.status === 'Accepted').length, 1);
    assert.equal(log.filter((entry) => entry.status === 'Duplicate').length, 99);
  });

  test('body rules: any content type, invalid JSON 400, over 256 KB 413, all logged with their size', async () => {
    const hook = await createWebhook(hangar, { name: 'bodies' });
    const auth = bearer(hook.secret);
    assert.equal((await deliver(hook.url, '{"a":1}', { ...auth, 'content-type': 'text/plain' })).status, 202);
    assert.equal(
      (await deliver(hook.url, '[1,2]', { ...auth, 'content-type': 'application/x-www-form-urlencoded' })).status,
      202,
    );
    assert.equal((await deliver(hook.url, '"just a string"', auth)).status, 202);
    // A Buffer body goes without any Content-Type header at all.
    assert.equal((await deliver(hook.url, Buffer.from('{"no":"content type"}'), auth)).status, 202);
    const invalid = await deliver(hook.url, '{"a":', { ...auth, 'content-type': 'application/json' });
    assert.equal(invalid.status, 400);
    assert.equal(invalid.body.error_code, 'invalid_request');
    assert.equal((await deliver(hook.url, Buffer.from([0x22, 0xff, 0x22]), auth)).status, 400);
    assert.equal((await deliver(hook.url, '', auth)).status, 400);
    const big = JSON.stringify({ pad: 'x'.repeat(256 * 1024) });
    const tooLarge = await deliver(hook.url, big, { ...auth, 'content-type': 'application/json' });
    assert.equal(tooLarge.status, 413);
    const exactly = `"${'y'.repeat(256 * 1024 - 2)}"`;
    assert.equal((await deliver(hook.url, exactly, auth)).status, 202);
    const log = await deliveryLog(hangar, hook.uid);
    const statuses = log.map((entry) => entry.status);
    assert.equal(statuses.filter((status) => status === 'Rejected (invalid JSON)').length, 3);
    assert.equal(statuses.filter((status) => status === 'Rejected (too large)').length, 1);
    assert.equal(log.find((entry) => entry.status === 'Rejected (too large)')!.size_bytes, Buffer.byteLength(big));
    assert.equal(log.find((entry) => entry.status === 'Rejected (invalid JSON)')!.size_bytes, 0);
    const rejected = await hangar.request(
      'GET',
      `/api/v1/factory/webhooks/${hook.uid}/deliveries/${encodeURIComponent(log.find((entry) => entry.status === 'Rejected (too large)')!.delivery_id)}`,
    );
    assert.equal(rejected.body.payload, undefined);
  });

  test('unknown, disabled and deleted webhooks are 404 at once; only POST is served', async () => {
    assert.equal((await deliver(`${hangar.url}/webhooks/w/AAAAAAAAAAAAAAAAAAAAAA`, '{}')).status, 404);
    const hook = await createWebhook(hangar, { name: 'lifecycle' });
    assert.equal((await fetch(hook.url)).status, 405);
    assert.equal((await fetch(hook.url)).headers.get('allow'), 'POST');
    assert.equal(
      (await hangar.request('PUT', `/api/v1/factory/webhooks/${hook.uid}`, { body: { enabled: false } })).status,
      200,
    );
    assert.equal((await deliver(hook.url, body(), bearer(hook.secret))).status, 404);
    assert.equal(
      (await hangar.request('PUT', `/api/v1/factory/webhooks/${hook.uid}`, { body: { enabled: true } })).status,
      200,
    );
    assert.equal((await deliver(hook.url, body(), bearer(hook.secret))).status, 202);
    assert.equal((await hangar.request('DELETE', `/api/v1/factory/webhooks/${hook.uid}`)).status, 204);
    assert.equal((await deliver(hook.url, body(), bearer(hook.secret))).status, 404);
  });

  test('rotation: the old secret fails immediately, the new one works', async () => {
    const hook = await createWebhook(hangar, { name: 'rotation' });
    const rotated = await hangar.request('POST', `/api/v1/factory/webhooks/${hook.uid}/rotate`);
    assert.equal((await deliver(hook.url, body(), bearer(hook.secret))).status, 401);
    assert.equal((await deliver(hook.url, body(), bearer(rotated.body.secret))).status, 202);
  });

  test('secret_name: the team secret is the credential, and updating it takes effect at once', async () => {
    await hangar.request('POST', '/api/v1/secrets', {
      body: { name: 'GH_HOOK_SECRET', value: 'first-managed-secret' },
    });
    const hook = await createWebhook(hangar, {
      name: 'managed',
      auth_mode: 'signature',
      signature_scheme: 'github',
      secret_name: 'GH_HOOK_SECRET',
    });
    const raw = body();
    assert.equal((await deliver(hook.url, raw, await signers.github!(raw, 'first-managed-secret'))).status, 202);
    await hangar.request('PUT', '/api/v1/secrets/GH_HOOK_SECRET', { body: { value: 'second-managed-secret' } });
    assert.equal((await deliver(hook.url, raw, await signers.github!(raw, 'first-managed-secret'))).status, 401);
    assert.equal((await deliver(hook.url, raw, await signers.github!(raw, 'second-managed-secret'))).status, 202);
  });

  test('the delivery log pages newest first', async () => {
    const hook = await createWebhook(hangar, { name: 'paging' });
    for (let i = 0; i < 5; i++) await deliver(hook.url, JSON.stringify({ i }), bearer(hook.secret));
    const first = await hangar.request('GET', `/api/v1/factory/webhooks/${hook.uid}/deliveries?limit=3`);
    assert.equal(first.body.deliveries.length, 3);
    const second = await hangar.request(
      'GET',
      `/api/v1/factory/webhooks/${hook.uid}/deliveries?limit=3&cursor=${encodeURIComponent(first.body.next_cursor)}`,
    );
    assert.equal(second.body.deliveries.length, 2);
    assert.equal(second.body.next_cursor, null);
    const times = [...first.body.deliveries, ...second.body.deliveries].map(
      (entry: { received_at: string }) => entry.received_at,
    );
    assert.deepEqual(times, [...times].sort().reverse());
    assert.equal(
      (await hangar.request('GET', `/api/v1/factory/webhooks/${hook.uid}/deliveries?cursor=garbage`)).status,
      400,
    );
  });
});
