/**
 * Issue 21, item 6: the server is not a way into the host's network. oz connects to HTTP MCP servers from the
 * server process, so their addresses are checked (at creation and again on the address actually connected to),
 * oz without network does not connect at all, and what a failing server answers stays out of the run.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import YAML from 'yaml';
import { AddressPolicy } from '../../src/platform/net/address-policy.js';
import { addressRefusal, guardedFetch } from '../../src/platform/net/guarded-fetch.js';
import { conversationBlocks, waitForState } from '../support/engine.js';
import { AnthropicServer } from '../support/model-servers/index.js';
import { createRun } from '../support/runs.js';
import { startTestServer, type TestServer } from '../support/server.js';

const SECRET_BODY = 'db-password=hunter2-from-the-error-page';

/** An HTTP server on loopback that counts requests and answers each with `status` and `body`. */
async function loopbackServer(
  status: number,
  body: string,
): Promise<{ port: number; requests: string[]; close(): Promise<void> }> {
  const requests: string[] = [];
  const server = http.createServer((request, response) => {
    requests.push(`${request.method} ${request.url}`);
    response.writeHead(status, `Internal ${SECRET_BODY}`, { 'content-type': 'text/plain' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    requests,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

const anthropic = new AnthropicServer();
let configDirectory: string;
let target: Awaited<ReturnType<typeof loopbackServer>>;

function operatorFile(name: string, network: boolean): string {
  const file = path.join(configDirectory, name);
  fs.writeFileSync(
    file,
    YAML.stringify({
      default_model: 'sonnet-test',
      builtin_harnesses: { oz: { max_steps: 2, network } },
      models: [
        {
          id: 'sonnet-test',
          provider: 'ANTHROPIC',
          model: 'claude-test',
          base_url: anthropic.baseURL,
          api_key_env: 'SSRF_TEST_KEY',
          cost: { input: 0, output: 0 },
        },
      ],
    }),
  );
  return file;
}

before(async () => {
  await anthropic.listen();
  target = await loopbackServer(500, SECRET_BODY);
  configDirectory = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-ssrf-'));
});

after(async () => {
  await target.close();
  await anthropic.close();
  fs.rmSync(configDirectory, { recursive: true, force: true });
});

describe('MCP server addresses, with no host allowed by the operator', () => {
  let hangar: TestServer;
  before(async () => {
    hangar = await startTestServer({ HANGAR_CONFIG: operatorFile('default.yaml', true), SSRF_TEST_KEY: 'k' });
  });
  after(() => hangar.stop());

  const loopbackSpellings = (port: number) => [
    `http://127.0.0.1:${port}/mcp`,
    `http://127.1:${port}/mcp`,
    `http://0x7f000001:${port}/mcp`,
    `http://2130706433:${port}/mcp`,
    `http://0177.0.0.1:${port}/mcp`,
    `http://[::1]:${port}/mcp`,
    `http://[::ffff:127.0.0.1]:${port}/mcp`,
    `http://[::ffff:7f00:1]:${port}/mcp`,
    `http://localhost:${port}/mcp`,
    `http://localhost.:${port}/mcp`,
    `http://0.0.0.0:${port}/mcp`,
    `http://[::]:${port}/mcp`,
  ];

  test('an inline URL on loopback, however it is spelled, is refused at run creation (400)', async () => {
    for (const url of loopbackSpellings(target.port)) {
      const response = await hangar.request('POST', '/agent/runs', {
        body: { prompt: 'x', config: { mcp_servers: { docs: { url } } } },
      });
      assert.equal(response.status, 400, `${url}: ${JSON.stringify(response.body)}`);
      assert.match(response.body.detail, /config\.mcp_servers\.docs\.url is refused: .*(loopback|unspecified)/, url);
    }
    assert.deepEqual(target.requests, []);
  });

  test('private, link-local (the metadata service) and carrier-grade NAT addresses are refused, inline and registered', async () => {
    for (const url of [
      'http://169.254.169.254/latest/meta-data/',
      'http://10.0.0.7/mcp',
      'http://172.16.0.1/mcp',
      'http://192.168.1.1/mcp',
      'http://100.64.0.1/mcp',
      'http://[fd00::1]/mcp',
      'http://[fe80::1]/mcp',
    ]) {
      const inline = await hangar.request('POST', '/agent/runs', {
        body: { prompt: 'x', config: { mcp_servers: { docs: { url } } } },
      });
      assert.equal(inline.status, 400, `${url}: ${JSON.stringify(inline.body)}`);
      const registered = await hangar.request('POST', '/api/v1/mcp-servers', { body: { name: 'internal', url } });
      assert.equal(registered.status, 400, `${url}: ${JSON.stringify(registered.body)}`);
      assert.match(
        registered.body.detail,
        /url is refused: .* is a (private|linkLocal|carrierGradeNat|uniqueLocal) address/,
      );
    }
  });

  test('a registered server on loopback is refused at creation and at update', async () => {
    const created = await hangar.request('POST', '/api/v1/mcp-servers', {
      body: { name: 'local', url: `http://localhost:${target.port}/mcp` },
    });
    assert.equal(created.status, 400, JSON.stringify(created.body));
    assert.match(created.body.detail, /localhost resolves to .*loopback/);
    const stdio = await hangar.request('POST', '/api/v1/mcp-servers', { body: { name: 'local', command: 'true' } });
    assert.equal(stdio.status, 201);
    const updated = await hangar.request('PUT', `/api/v1/mcp-servers/${stdio.body.uid}`, {
      body: { name: 'local', url: `http://[::ffff:127.0.0.1]:${target.port}/mcp` },
    });
    assert.equal(updated.status, 400, JSON.stringify(updated.body));
  });

  test('the connection itself is checked on the address it goes to, so a name that resolves there later gains nothing', async () => {
    const before = target.requests.length;
    const fetcher = guardedFetch(new AddressPolicy());
    for (const url of [
      `http://localhost:${target.port}/`,
      `http://0x7f000001:${target.port}/`,
      `http://[::ffff:127.0.0.1]:${target.port}/`,
    ]) {
      const error = await fetcher(url).then(
        () => undefined,
        (failure: unknown) => failure,
      );
      assert.ok(addressRefusal(error), `${url} was not refused: ${String(error)}`);
    }
    // Allowed by address, the same server is reached: the refusals above were the policy's, not a dead port.
    const allowed = guardedFetch(AddressPolicy.fromList('127.0.0.0/8'));
    assert.equal((await allowed(`http://localhost:${target.port}/`)).status, 500);
    assert.equal(target.requests.length, before + 1);
    target.requests.length = 0;
  });
});

describe('oz and HTTP MCP servers the operator allows on loopback', () => {
  test('with network off, oz does not connect to an HTTP MCP server at all, and the run says why', async () => {
    const hangar = await startTestServer({
      HANGAR_CONFIG: operatorFile('no-network.yaml', false),
      SSRF_TEST_KEY: 'k',
      HANGAR_MCP_ALLOWED_HOSTS: '127.0.0.1,::1,localhost',
    });
    try {
      const runId = await createRun(hangar, {
        prompt: 'x',
        config: { mcp_servers: { docs: { url: `http://127.0.0.1:${target.port}/mcp` } } },
      });
      const run = await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR');
      assert.equal(run.state, 'FAILED');
      assert.match(
        run.status_message.message,
        /MCP server docs could not be reached: it is an HTTP server, and oz runs without network/,
      );
      assert.deepEqual(target.requests, [], 'the MCP server saw no request');
    } finally {
      await hangar.stop();
    }
  });

  test("an MCP server's error page does not reach the run: status only", async () => {
    const hangar = await startTestServer({
      HANGAR_CONFIG: operatorFile('network.yaml', true),
      SSRF_TEST_KEY: 'k',
      HANGAR_MCP_ALLOWED_HOSTS: '127.0.0.1',
    });
    try {
      const runId = await createRun(hangar, {
        prompt: 'x',
        config: { mcp_servers: { docs: { url: `http://127.0.0.1:${target.port}/mcp` } } },
      });
      const run = await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR');
      assert.equal(run.state, 'FAILED');
      assert.ok(target.requests.length > 0, 'the allowed server was reached');
      assert.match(run.status_message.message, /MCP server docs could not be reached: it answered HTTP 500/);
      const everything = JSON.stringify([
        run,
        await conversationBlocks(hangar, runId),
        (await hangar.request('GET', `/agent/runs/${runId}/events`)).body,
      ]);
      assert.ok(!everything.includes('hunter2'), 'the error body stays out of the run');
      const link = await fetch(`${hangar.apiUrl}/agent/runs/${runId}/transcript`, {
        headers: { authorization: `Bearer ${hangar.apiKey}` },
        redirect: 'manual',
      });
      const transcript = await (await fetch(link.headers.get('location')!)).text();
      assert.match(transcript, /HTTP 500/);
      assert.ok(!transcript.includes('hunter2'), 'the error body stays out of the transcript');
    } finally {
      target.requests.length = 0;
      await hangar.stop();
    }
  });
});
