import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { harnessEnv } from '../support/engine.js';
import { startTestServer, type TestServer } from '../support/server.js';
import {
  type CreatedWebhook,
  deliver,
  deliveryLog,
  runsStartedBy,
  signers,
  webhookWithAutomation,
} from '../support/webhooks.js';

/**
 * Issue 48, item 2: the interface's identity rule for signed webhooks. "A delivery whose identity was already
 * accepted returns 202, starts nothing and is logged as Duplicate", the identity being first the provider's own
 * delivery header. Each delivery here is validly signed by the provider's package (hand-written HMAC for Sentry and
 * PagerDuty, which publish none), and an automation starts a run for every accepted one.
 */
describe('webhook delivery identity: an accepted ID is a Duplicate, whatever the body', () => {
  let hangar: TestServer;

  before(async () => {
    hangar = await startTestServer(harnessEnv({}, { HANGAR_WEBHOOK_RATE_PER_MINUTE: '100000' }));
  });
  after(() => hangar.stop());

  function hookWithAutomation(scheme: string, extra: Record<string, unknown> = {}): Promise<CreatedWebhook> {
    return webhookWithAutomation(hangar, {
      name: `identity-${scheme}-${randomUUID().slice(0, 8)}`,
      signature_scheme: scheme,
      // Standard Webhooks secrets are generated (whsec_...); the others take ours.
      ...(scheme === 'standard_webhooks' ? {} : { secret: `${scheme}-secret-${randomUUID()}` }),
      ...extra,
    });
  }

  const event = () => JSON.stringify({ event: 'deploy', nonce: randomUUID() });

  /**
   * Each scheme with a delivery header, signed by its signer; `idHeader` is where the identity goes (the provider's
   * own header, or, for Stripe and Vercel, which send none, X-Service-Delivery-Id and a configured header).
   */
  const cases: Array<{
    label: string;
    scheme: string;
    signer: string;
    idHeader: string;
    hook?: Record<string, unknown>;
  }> = [
    { label: 'github (X-GitHub-Delivery)', scheme: 'github', signer: 'github', idHeader: 'x-github-delivery' },
    {
      label: 'standard_webhooks (webhook-id)',
      scheme: 'standard_webhooks',
      signer: 'standard_webhooks',
      idHeader: 'webhook-id',
    },
    {
      label: 'standard_webhooks from Svix (svix-id)',
      scheme: 'standard_webhooks',
      signer: 'svix',
      idHeader: 'svix-id',
    },
    { label: 'sentry (Request-ID)', scheme: 'sentry', signer: 'sentry', idHeader: 'request-id' },
    { label: 'pagerduty (X-Webhook-Id)', scheme: 'pagerduty', signer: 'pagerduty', idHeader: 'x-webhook-id' },
    { label: 'stripe (X-Service-Delivery-Id)', scheme: 'stripe', signer: 'stripe', idHeader: 'x-service-delivery-id' },
    {
      label: 'vercel (a configured delivery_id_header)',
      scheme: 'vercel',
      signer: 'vercel',
      idHeader: 'x-vercel-id',
      hook: { delivery_id_header: 'X-Vercel-Id' },
    },
  ];

  for (const { label, scheme, signer, idHeader, hook: extra } of cases) {
    test(`${label}: a new signed body under an accepted ID is a Duplicate and starts nothing`, async () => {
      const hook = await hookWithAutomation(scheme, extra);
      // The signers that sign the ID (Standard Webhooks, Svix) take it as an option; the others ignore it and the
      // header is set after signing.
      const signed = async (raw: string, id: string) => ({
        ...(await signers[signer]!(raw, hook.secret, { id })),
        [idHeader]: id,
      });
      const first = event();
      const captured = await signed(first, 'evt-1');
      const accepted = await deliver(hook.url, first, captured);
      assert.equal(accepted.status, 202, JSON.stringify(accepted.body));
      assert.deepEqual(accepted.body, { delivery_id: 'evt-1' });

      const other = event();
      const reused = await deliver(hook.url, other, await signed(other, 'evt-1'));
      assert.equal(reused.status, 202, 'a duplicate is answered like an accepted delivery');
      assert.deepEqual(reused.body, { delivery_id: 'evt-1' });
      assert.deepEqual(
        (await deliveryLog(hangar, hook.uid)).map((entry) => [entry.delivery_id, entry.status]),
        [
          ['evt-1', 'Duplicate'],
          ['evt-1', 'Accepted'],
        ],
      );
      assert.equal(await runsStartedBy(hangar, hook), 1, 'the reused ID started no second run');

      // That body, under an ID of its own, is a new event: the Duplicate did not spend its replay key.
      assert.equal((await deliver(hook.url, other, await signed(other, 'evt-2'))).status, 202);
      assert.equal((await deliveryLog(hangar, hook.uid))[0]!.status, 'Accepted');
      assert.equal(await runsStartedBy(hangar, hook), 2);

      // The replay protection stays: the captured first delivery under a fresh ID starts nothing. Where the ID is
      // signed (Standard Webhooks, Svix) the signature no longer matches; elsewhere the signed body is a Duplicate.
      const replayed = await deliver(hook.url, first, { ...captured, [idHeader]: 'evt-3' });
      if (scheme === 'standard_webhooks') assert.equal(replayed.status, 401);
      else {
        assert.equal(replayed.status, 202);
        const latest = (await deliveryLog(hangar, hook.uid))[0]!;
        assert.deepEqual([latest.delivery_id, latest.status], ['evt-3', 'Duplicate']);
      }
      assert.equal(await runsStartedBy(hangar, hook), 2);
    });
  }

  test('github: 20 concurrent deliveries of one X-GitHub-Delivery with different bodies: one Accepted, one run', async () => {
    const hook = await hookWithAutomation('github');
    const responses = await Promise.all(
      Array.from({ length: 20 }, async () => {
        const raw = event();
        return deliver(hook.url, raw, await signers.github!(raw, hook.secret, { id: 'same-delivery' }));
      }),
    );
    assert.ok(responses.every((response) => response.status === 202));
    const log = await deliveryLog(hangar, hook.uid);
    assert.equal(log.length, 20);
    assert.equal(log.filter((entry) => entry.status === 'Accepted').length, 1);
    assert.equal(log.filter((entry) => entry.status === 'Duplicate').length, 19);
    assert.equal(await runsStartedBy(hangar, hook), 1);
  });
});
