import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { spawnKeyedServer, stopChild } from '../support/processes.js';
import { rawRequest } from '../support/raw-http.js';
import { createTestDatabase } from '../support/server.js';

const WEBSOCKET_UPGRADE = {
  connection: 'Upgrade',
  upgrade: 'websocket',
  'sec-websocket-version': '13',
  'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
};

test('info-level logs of a real server carry no URL credential: url_token webhook token, download-link signature, model-proxy key', async (t) => {
  const database = await createTestDatabase();
  t.after(() => database.drop());
  const server = await spawnKeyedServer(database, { HANGAR_LOG_LEVEL: 'info' });
  t.after(() => stopChild(server.child, 'SIGKILL'));

  const created = await fetch(`${server.url}/api/v1/factory/webhooks`, {
    method: 'POST',
    headers: server.headers,
    body: JSON.stringify({ name: 'url-token', auth_mode: 'url_token' }),
  });
  assert.equal(created.status, 201);
  const hook = (await created.json()) as { uid: string; secret: string; url: string };
  assert.ok(hook.url.endsWith(`/${hook.secret}`));
  const ingress = `${server.url}${new URL(hook.url).pathname}`;
  assert.equal((await fetch(ingress, { method: 'POST', body: JSON.stringify({ id: randomUUID() }) })).status, 202);
  // A wrong token is a credential guess: it must not land in the logs either.
  const guess = `guess-${randomBytes(8).toString('hex')}`;
  assert.equal(
    (await fetch(`${ingress.slice(0, ingress.lastIndexOf('/'))}/${guess}`, { method: 'POST', body: '{}' })).status,
    401,
  );

  // Download links carry their credential in the query string.
  const signature = randomBytes(32).toString('base64url');
  const expires = String(Math.floor(Date.now() / 1000) + 600);
  const download = await fetch(
    `${server.url}/api/v1/downloads/runs/${randomUUID()}/transcript?expires=${expires}&signature=${signature}`,
  );
  assert.equal(download.status, 403);
  const encoded = await fetch(
    `${server.url}/api/v1/downloads/conversations/transcript?runs=a&%73ignature=${signature}x&expires=${expires}`,
  );
  assert.equal(encoded.status, 403);

  // The same credentials on other ways in, each logged by another line than Fastify's request line: an upgrade
  // request (the websocket plugin logs the path of one no route takes), a %2F between uid and token.
  const upgraded = await rawRequest(server.url, {
    method: 'GET',
    path: new URL(hook.url).pathname,
    headers: WEBSOCKET_UPGRADE,
  });
  assert.ok(upgraded.status < 500);
  const upgradedDownload = await rawRequest(server.url, {
    method: 'GET',
    path: `/api/v1/downloads/runs/${randomUUID()}/transcript?expires=${expires}&signature=${signature}`,
    headers: WEBSOCKET_UPGRADE,
  });
  assert.ok(upgradedDownload.status < 500);
  const slashGuess = `slash-${randomBytes(8).toString('hex')}`;
  assert.equal((await fetch(`${server.url}/webhooks/w/${hook.uid}%2F${slashGuess}`, { method: 'POST' })).status, 404);
  // A CLI harness may send its task token as Gemini's ?key= to the model proxy.
  const taskToken = `token-${randomBytes(16).toString('hex')}`;
  const proxied = await fetch(
    `${server.url}/api/v1/harness-support/model-proxy/google/v1beta/models/m:generateContent?key=${taskToken}`,
    { method: 'POST', body: '{}' },
  );
  assert.equal(proxied.status, 401);

  assert.deepEqual(await stopChild(server.child, 'SIGTERM'), { code: 0, signal: null });
  const output = server.output();
  assert.match(
    output,
    new RegExp(`"url":"/webhooks/w/${hook.uid}/\\[redacted\\]".*"msg":"incoming request"`),
    'the ingress request is not logged with its token redacted',
  );
  assert.match(output, /"url":"\/api\/v1\/downloads\/runs\/[^"]*signature=\[redacted\]/);
  assert.equal(output.includes(hook.secret), false, 'the url_token secret is in the logs');
  assert.equal(output.includes(guess), false, 'a guessed token is in the logs');
  assert.equal(output.includes(signature), false, 'a download-link signature is in the logs');
  assert.equal(output.includes(slashGuess), false, 'a token after %2F is in the logs');
  assert.equal(output.includes(taskToken), false, "the model proxy's ?key= is in the logs");
  assert.match(output, /key=\[redacted\]/, 'the model-proxy request is not logged with its key redacted');
});
