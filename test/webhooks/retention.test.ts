import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { KEEP_DELIVERY_DAYS, KEEP_LATEST_DELIVERIES } from '../../src/webhooks/retention.js';
import { pruneDeliveries } from '../../src/webhooks/store.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { createWebhook, deliver, deliveryLog } from '../support/webhooks.js';

let hangar: TestServer;
before(async () => (hangar = await startTestServer({ HANGAR_WEBHOOK_RATE_PER_MINUTE: '100000' }, { role: 'api' })));
after(() => hangar.stop());

test('retention keeps the latest 50 deliveries and the last 7 days, and never an unevaluated accepted one', async () => {
  const old = await createWebhook(hangar, { name: 'old-traffic' });
  const recent = await createWebhook(hangar, { name: 'recent-traffic' });
  const auth = (hook: { secret: string }) => ({ authorization: `Bearer ${hook.secret}` });
  for (let i = 0; i < 70; i++) await deliver(old.url, JSON.stringify({ i }), auth(old));
  for (let i = 0; i < 60; i++) await deliver(recent.url, JSON.stringify({ i }), auth(recent));
  // The first webhook's deliveries are 8 days old, all evaluated but the oldest one.
  await sql`UPDATE webhook_deliveries SET received_at = received_at - interval '8 days', evaluated_at = now() WHERE webhook_uid = ${old.uid}`.execute(
    hangar.db,
  );
  const oldest = (await deliveryLog(hangar, old.uid)).at(-1)!;
  await sql`UPDATE webhook_deliveries SET evaluated_at = NULL WHERE webhook_uid = ${old.uid} AND delivery_id = ${oldest.delivery_id}`.execute(
    hangar.db,
  );

  await pruneDeliveries(hangar.db, KEEP_LATEST_DELIVERIES, KEEP_DELIVERY_DAYS);
  const kept = await deliveryLog(hangar, old.uid);
  assert.equal(kept.length, KEEP_LATEST_DELIVERIES + 1, 'the latest 50, and the one still waiting for evaluation');
  assert.ok(kept.some((entry) => entry.delivery_id === oldest.delivery_id));
  assert.equal((await deliveryLog(hangar, recent.uid)).length, 60, 'younger than 7 days: all kept');
});
