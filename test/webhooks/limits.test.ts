import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { onPostgres } from '../support/processes.js';
import { createTestDatabase, startTestServer, type TestDatabase, type TestServer } from '../support/server.js';
import { createWebhook, deliver, deliveryLog } from '../support/webhooks.js';

// On PostgreSQL, two replicas on one database: the limits are counted in the database, so they hold whichever
// replica a delivery reaches. PGlite is one process, so there both "replicas" are the same server.
let database: TestDatabase;
let first: TestServer;
let second: TestServer;
before(async () => {
  database = await createTestDatabase();
  first = await startTestServer({}, { role: 'api', database });
  second = onPostgres()
    ? await startTestServer({ HANGAR_BOOTSTRAP_API_KEY: first.apiKey }, { role: 'api', database })
    : first;
});
after(async () => {
  if (second !== first) await second.stop();
  await first.stop();
  await database.drop();
});

describe('ingress limits', () => {
  test('60 deliveries per minute per sender, across replicas; the 61st gets 429 with Retry-After', async () => {
    const hook = await createWebhook(first, { name: 'rate' });
    const urls = [hook.url, hook.url.replace(first.url, second.url)];
    const statuses: number[] = [];
    for (let i = 0; i < 60; i++) {
      statuses.push(
        (await deliver(urls[i % 2]!, JSON.stringify({ i }), { authorization: `Bearer ${hook.secret}` })).status,
      );
    }
    assert.deepEqual([...new Set(statuses)], [202]);
    const over = await deliver(urls[0]!, JSON.stringify({ i: 60 }), { authorization: `Bearer ${hook.secret}` });
    assert.equal(over.status, 429);
    const retryAfter = Number(over.headers.get('retry-after'));
    assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 120, String(retryAfter));
    assert.equal(
      (await deliver(urls[1]!, JSON.stringify({ i: 61 }), { authorization: `Bearer ${hook.secret}` })).status,
      429,
    );
    // Another webhook has a budget of its own.
    const other = await createWebhook(first, { name: 'rate-other' });
    assert.equal((await deliver(other.url, '{}', { authorization: `Bearer ${other.secret}` })).status, 202);
  });

  test('failed authentications have a budget of their own: past it, even a valid delivery gets 429', async () => {
    const hook = await createWebhook(first, { name: 'auth-budget' });
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++)
      statuses.push((await deliver(hook.url, '{}', { authorization: 'Bearer guessing' })).status);
    assert.deepEqual([...new Set(statuses)], [401]);
    const blocked = await deliver(hook.url.replace(first.url, second.url), '{}', {
      authorization: `Bearer ${hook.secret}`,
    });
    assert.equal(blocked.status, 429);
    assert.ok(Number(blocked.headers.get('retry-after')) >= 1);
    assert.match(blocked.body.detail, /failed authentications/);
    const log = await deliveryLog(first, hook.uid);
    assert.equal(log.length, 10);
    assert.ok(log.every((entry) => entry.status === 'Rejected (auth)'));
  });
});
