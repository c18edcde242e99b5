import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { pruneDeliveries } from '../../src/webhooks/store.js';
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
 * Issue 21, item 9: a captured signed delivery replayed byte for byte under a fresh delivery-ID header (which
 * these providers do not sign, or, for Stripe, do not send) is a Duplicate: 202 like any duplicate, logged
 * `Duplicate`, and it starts no second run.
 */
describe('security: replayed webhook deliveries with a fresh delivery ID', () => {
  let hangar: TestServer;

  before(async () => {
    hangar = await startTestServer(harnessEnv({}, { HANGAR_WEBHOOK_RATE_PER_MINUTE: '100000' }));
  });
  after(() => hangar.stop());

  /** A signed webhook with an automation that starts a run for every delivery it evaluates. */
  function hookWithAutomation(scheme: string): Promise<CreatedWebhook> {
    const secret =
      scheme === 'github' || scheme === 'standard_webhooks' ? undefined : `${scheme}-secret-${randomUUID()}`;
    return webhookWithAutomation(hangar, {
      name: `${scheme}-${randomUUID().slice(0, 8)}`,
      signature_scheme: scheme,
      ...(secret ? { secret } : {}),
    });
  }

  /** The provider's own delivery-ID header, or the generic one for providers that send none. */
  const idHeader: Record<string, string> = {
    github: 'x-github-delivery',
    sentry: 'request-id',
    pagerduty: 'x-webhook-id',
    vercel: 'x-service-delivery-id',
    stripe: 'x-service-delivery-id',
  };

  for (const scheme of ['github', 'sentry', 'pagerduty', 'vercel', 'stripe']) {
    test(`${scheme}: the same signed bytes under a fresh delivery ID are a Duplicate and start nothing; so is a new body under the old ID`, async () => {
      const hook = await hookWithAutomation(scheme);
      const raw = JSON.stringify({ event: 'deploy', scheme, nonce: randomUUID() });
      const captured = { ...(await signers[scheme]!(raw, hook.secret)), [idHeader[scheme]!]: `original-${scheme}` };
      const first = await deliver(hook.url, raw, captured);
      assert.equal(first.status, 202, JSON.stringify(first.body));
      assert.deepEqual(first.body, { delivery_id: `original-${scheme}` });

      const replayed = await deliver(hook.url, raw, {
        ...captured,
        [idHeader[scheme]!]: `fresh-${scheme}`,
        'x-service-delivery-id': `fresh-${scheme}`,
      });
      assert.equal(replayed.status, 202, 'a duplicate is answered like an accepted delivery');
      assert.deepEqual(replayed.body, { delivery_id: `fresh-${scheme}` }, "the sender's ID is kept for display");
      const log = await deliveryLog(hangar, hook.uid);
      assert.deepEqual(
        log.map((entry) => [entry.delivery_id, entry.status]),
        [
          [`fresh-${scheme}`, 'Duplicate'],
          [`original-${scheme}`, 'Accepted'],
        ],
      );
      assert.equal(await runsStartedBy(hangar, hook), 1, 'the replay started no second run');

      // A new signed body under the accepted ID is a Duplicate too: the interface's identity rule (issue 48).
      const next = JSON.stringify({ event: 'deploy', scheme, nonce: randomUUID() });
      const reused = await deliver(hook.url, next, {
        ...(await signers[scheme]!(next, hook.secret)),
        [idHeader[scheme]!]: `original-${scheme}`,
      });
      assert.equal(reused.status, 202);
      assert.equal((await deliveryLog(hangar, hook.uid))[0]!.status, 'Duplicate');
      // The provider's next event, under its own ID, counts.
      const sent = await deliver(hook.url, next, {
        ...(await signers[scheme]!(next, hook.secret)),
        [idHeader[scheme]!]: `next-${scheme}`,
      });
      assert.equal(sent.status, 202);
      assert.equal((await deliveryLog(hangar, hook.uid))[0]!.status, 'Accepted');
      assert.equal(await runsStartedBy(hangar, hook), 2);
    });
  }

  test('github: a replay after the original left the delivery log (retention) is still a Duplicate', async () => {
    const hook = await hookWithAutomation('github');
    const raw = JSON.stringify({ event: 'push', nonce: randomUUID() });
    const captured = await signers.github!(raw, hook.secret, { id: 'kept-original' });
    assert.equal((await deliver(hook.url, raw, captured)).status, 202);
    const later = JSON.stringify({ event: 'push', nonce: randomUUID() });
    assert.equal((await deliver(hook.url, later, await signers.github!(later, hook.secret))).status, 202);
    assert.equal(await runsStartedBy(hangar, hook), 2);
    // Retention as if the original were a week old and 50 deliveries had come since: only the latest entry stays.
    await pruneDeliveries(hangar.db, 1, 0);
    assert.deepEqual((await deliveryLog(hangar, hook.uid)).length, 1, 'the original is gone from the log');
    const replayed = await deliver(hook.url, raw, { ...captured, 'x-github-delivery': 'after-retention' });
    assert.equal(replayed.status, 202);
    assert.equal((await deliveryLog(hangar, hook.uid))[0]!.status, 'Duplicate');
    assert.equal(await runsStartedBy(hangar, hook), 2);
  });

  test("standard_webhooks: the signed message ID decides, so the provider's retry (new timestamp and signature) is a Duplicate", async () => {
    const hook = await hookWithAutomation('standard_webhooks');
    const raw = JSON.stringify({ type: 'invoice.paid', nonce: randomUUID() });
    assert.equal(
      (
        await deliver(
          hook.url,
          raw,
          await signers.standard_webhooks!(raw, hook.secret, { id: 'msg_retried', at: new Date(Date.now() - 60_000) }),
        )
      ).status,
      202,
    );
    const retry = await deliver(
      hook.url,
      raw,
      await signers.standard_webhooks!(raw, hook.secret, { id: 'msg_retried' }),
    );
    assert.equal(retry.status, 202);
    assert.deepEqual(
      (await deliveryLog(hangar, hook.uid)).map((entry) => entry.status),
      ['Duplicate', 'Accepted'],
    );
    assert.equal(await runsStartedBy(hangar, hook), 1);
  });
});
