import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { generateApiKey } from '../../src/platform/crypto.js';
import { onPostgres } from '../support/processes.js';
import { createTestDatabase, startTestServer, type TestServer } from '../support/server.js';
import { createWebhook, deliver } from '../support/webhooks.js';

const LIMIT = 5;

/** GET /agent/runs with `key`, as the client `forwardedFor` says (believed only behind a trusted proxy). */
async function attempt(hangar: TestServer, key: string, forwardedFor?: string): Promise<Response> {
  return fetch(`${hangar.apiUrl}/agent/runs`, {
    headers: { authorization: `Bearer ${key}`, ...(forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}) },
  });
}

const guess = () => generateApiKey();

test('API-key guesses from one client are throttled: 429 with Retry-After, then even the right key waits', async (t) => {
  const hangar = await startTestServer({ HANGAR_AUTH_FAILURES_PER_MINUTE: String(LIMIT) });
  t.after(() => hangar.stop());
  // Without HANGAR_TRUST_PROXY a forged X-Forwarded-For does not make each guess a new client.
  for (let i = 0; i < LIMIT; i++) assert.equal((await attempt(hangar, guess(), `198.51.100.${i}`)).status, 401);
  const refused = await attempt(hangar, guess(), '198.51.100.99');
  assert.equal(refused.status, 429);
  assert.match(refused.headers.get('retry-after') ?? '', /^[1-9]\d*$/);
  assert.equal(((await refused.json()) as { error_code: string }).error_code, 'resource_unavailable');
  assert.equal((await attempt(hangar, hangar.apiKey)).status, 429, 'a blocked client could still try keys');
  // Requests without a key are not guesses: they stay 401 and are not what blocks.
  assert.equal((await fetch(`${hangar.apiUrl}/agent/runs`)).status, 401);
});

test('behind a trusted proxy each forwarded client has its own budget, for API keys and webhook senders alike', async (t) => {
  const hangar = await startTestServer({
    HANGAR_AUTH_FAILURES_PER_MINUTE: String(LIMIT),
    HANGAR_WEBHOOK_AUTH_FAILURES_PER_MINUTE: '2',
    HANGAR_TRUST_PROXY: '127.0.0.1',
  });
  t.after(() => hangar.stop());
  const guesser = '203.0.113.7';
  const colleague = '203.0.113.8';
  for (let i = 0; i < LIMIT; i++) assert.equal((await attempt(hangar, guess(), guesser)).status, 401);
  assert.equal((await attempt(hangar, guess(), guesser)).status, 429);
  assert.equal(
    (await attempt(hangar, hangar.apiKey, colleague)).status,
    200,
    'another client behind the same proxy was blocked',
  );

  const hook = await createWebhook(hangar, { name: 'behind-proxy' });
  const body = () => JSON.stringify({ id: randomBytes(6).toString('hex') });
  for (let i = 0; i < 3; i++)
    await deliver(hook.url, body(), { authorization: 'Bearer wrong', 'x-forwarded-for': guesser });
  assert.equal(
    (await deliver(hook.url, body(), { authorization: 'Bearer wrong', 'x-forwarded-for': guesser })).status,
    429,
  );
  const honest = await deliver(hook.url, body(), {
    authorization: `Bearer ${hook.secret}`,
    'x-forwarded-for': colleague,
  });
  assert.equal(honest.status, 202, 'the webhook limit counted the proxy, not the sender');
});

test('failures count across replicas sharing one database', {
  skip: onPostgres() ? false : 'PostgreSQL only: replicas share one database',
}, async (t) => {
  const database = await createTestDatabase();
  t.after(() => database.drop());
  const env = { HANGAR_AUTH_FAILURES_PER_MINUTE: String(LIMIT) };
  const first = await startTestServer(env, { database, role: 'api' });
  t.after(() => first.stop());
  const second = await startTestServer({ ...env, HANGAR_BOOTSTRAP_API_KEY: first.apiKey }, { database, role: 'api' });
  t.after(() => second.stop());
  for (let i = 0; i < LIMIT - 2; i++) assert.equal((await attempt(first, guess())).status, 401);
  assert.equal((await attempt(second, guess())).status, 401);
  assert.equal((await attempt(second, guess())).status, 401);
  assert.equal((await attempt(second, guess())).status, 429);
  assert.equal((await attempt(first, guess())).status, 429);
});
