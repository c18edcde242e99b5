import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { hangarCli } from '../support/cli.js';
import { spawnKeyedServer, stopChild } from '../support/processes.js';
import { createTestDatabase } from '../support/server.js';

test('no response body, header or log line (at debug level) ever contains a secret value', async (t) => {
  const database = await createTestDatabase();
  t.after(() => database.drop());
  const server = await spawnKeyedServer(database, { HANGAR_LOG_LEVEL: 'debug' });
  const { apiKey } = server;
  t.after(() => stopChild(server.child, 'SIGKILL'));

  const values: string[] = [];
  const secretValue = () => {
    const value = `sv-${randomBytes(12).toString('hex')}`;
    values.push(value);
    return value;
  };
  const seen: string[] = [];
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${server.url}/api/v1${path}`, {
      method,
      headers: {
        authorization: `Bearer ${apiKey}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await response.text();
    seen.push(text, JSON.stringify([...response.headers]));
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  };

  assert.equal((await call('POST', '/secrets', { name: 'TOKEN', value: secretValue() })).status, 201);
  assert.equal((await call('PUT', '/secrets/TOKEN', { value: secretValue() })).status, 200);
  assert.equal((await call('GET', '/secrets')).status, 200);
  assert.equal((await call('POST', '/secrets', { name: 'TOKEN', value: secretValue() })).status, 409);
  assert.equal((await call('POST', '/secrets', { name: '1-bad-name', value: secretValue() })).status, 400);
  assert.equal((await call('POST', '/secrets', `{"name": "BROKEN", "value": "${secretValue()}"`)).status, 400);
  assert.equal(
    (await call('POST', '/secrets', { name: 'HUGE', value: secretValue() + 'x'.repeat(64 * 1024) })).status,
    400,
  );
  assert.equal(
    (await call('POST', '/secrets', { name: 'MULTIBYTE', value: secretValue() + 'é'.repeat(32 * 1024) })).status,
    400,
  );
  assert.equal((await call('PUT', '/secrets/TOKEN', { value: secretValue(), extra: true })).status, 400);
  assert.equal((await call('PUT', '/secrets/MISSING', { value: secretValue() })).status, 404);
  assert.equal((await call('PUT', '/secrets/TOKEN', { value: 42 })).status, 400);

  const mcp = await call('POST', '/mcp-servers', {
    name: 'gh',
    command: 'npx',
    env: { GITHUB_TOKEN: { secret: 'TOKEN' } },
  });
  assert.equal(mcp.status, 201);
  const http = await call('POST', '/mcp-servers', {
    name: 'web',
    url: 'https://mcp.example.com',
    headers: { Authorization: { secret: 'TOKEN' } },
  });
  assert.equal(http.status, 201);
  assert.equal((await call('GET', '/mcp-servers')).status, 200);
  assert.equal((await call('GET', `/mcp-servers/${mcp.body.uid}`)).status, 200);
  assert.equal(
    (
      await call('PUT', `/mcp-servers/${mcp.body.uid}`, {
        name: 'gh',
        command: 'npx',
        env: { GITHUB_TOKEN: { secret: 'TOKEN' }, EXTRA: 'plain' },
      })
    ).status,
    200,
  );
  const run = await call('POST', '/agent/runs', {
    prompt: 'use it',
    config: { mcp_servers: { gh: { warp_id: mcp.body.uid }, web: { warp_id: http.body.uid } } },
  });
  assert.equal(run.status, 200, JSON.stringify(run.body));
  assert.equal((await call('GET', `/agent/runs/${run.body.run_id}`)).status, 200);

  const env = { url: server.url, apiKey };
  const cliRuns = [
    await hangarCli(['secrets', 'set', 'FROM_CLI', '--value', secretValue()], env),
    await hangarCli(['secrets', 'set', 'FROM_STDIN'], env, `${secretValue()}\n`),
    await hangarCli(['secrets', 'set', 'TOKEN'], env, secretValue()),
    await hangarCli(['secrets', 'set', '1-bad', '--value', secretValue()], env),
    await hangarCli(['secrets', 'list'], env),
    await hangarCli(['mcp-servers', 'list', '--json'], env),
  ];
  assert.deepEqual(
    cliRuns.map((result) => result.code),
    [0, 0, 0, 1, 0, 0],
    JSON.stringify(cliRuns),
  );
  for (const result of cliRuns) seen.push(result.stdout, result.stderr);

  // Stop gracefully so every log line is flushed before reading them.
  assert.deepEqual(await stopChild(server.child, 'SIGTERM'), { code: 0, signal: null });
  const output = server.output();
  assert.match(
    output,
    /"url":"\/api\/v1\/secrets\/TOKEN".*"msg":"incoming request"/,
    'request logging was not on: the test would prove nothing',
  );
  assert.doesNotMatch(output, /"level":(50|60)/, 'a request failed with an internal error');
  const everything = seen.join('\n');
  for (const value of values) {
    assert.equal(output.includes(value), false, `a secret value appears in the logs: ${value}`);
    assert.equal(everything.includes(value), false, `a secret value appears in a response or CLI output: ${value}`);
  }
});
