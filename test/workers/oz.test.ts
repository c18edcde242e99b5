import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import YAML from 'yaml';
import { waitForState } from '../support/engine.js';
import { DocsMcpServer } from '../support/mcp/http-server.js';
import { AnthropicServer } from '../support/model-servers/index.js';
import { stopChild } from '../support/processes.js';
import { createRun } from '../support/runs.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { startWorker, type WorkerProcess, waitForConnections } from '../support/workers.js';

// The built-in oz agent on a self-hosted worker: the worker's own catalogue and keys call the model, and what the
// run needs from the server's team (a registered MCP server with a team secret) comes with the assignment.

describe('oz on a self-hosted worker', () => {
  const anthropic = new AnthropicServer();
  const docs = new DocsMcpServer();
  let hangar: TestServer;
  let worker: WorkerProcess;
  let configDirectory: string;

  before(async () => {
    await Promise.all([anthropic.listen(), docs.listen()]);
    configDirectory = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-worker-oz-'));
    const file = path.join(configDirectory, 'hangar.yaml');
    fs.writeFileSync(
      file,
      // oz connects to HTTP MCP servers from the worker process: only with network on, and to allowed addresses.
      YAML.stringify({
        builtin_harnesses: { oz: { network: true } },
        models: [
          {
            id: 'worker-sonnet',
            provider: 'ANTHROPIC',
            model: 'claude-worker',
            base_url: anthropic.baseURL,
            api_key_env: 'WORKER_MODEL_KEY',
            cost: { input: 1, output: 1 },
          },
        ],
      }),
    );
    // The server has no model key: the worker's is the one used.
    hangar = await startTestServer(
      { HANGAR_RUN_LEASE_SECONDS: '6', HANGAR_MCP_ALLOWED_HOSTS: '127.0.0.1' },
      { role: 'api' },
    );
    worker = startWorker(hangar, 'oz-box', {
      env: { HANGAR_CONFIG: file, WORKER_MODEL_KEY: 'worker-key', HANGAR_MCP_ALLOWED_HOSTS: '127.0.0.1' },
    });
    await waitForConnections(hangar, 'oz-box', 1);
  });

  after(async () => {
    if (worker?.child.exitCode === null) await stopChild(worker.child, 'SIGKILL');
    await hangar?.stop();
    await Promise.all([anthropic.close(), docs.close()]);
    fs.rmSync(configDirectory, { recursive: true, force: true });
  });

  test('runs with the worker model and a registered MCP server whose secret the assignment carried', async () => {
    assert.equal(
      (await hangar.request('POST', '/api/v1/secrets', { body: { name: 'DOCS_TOKEN', value: 'docs-secret' } })).status,
      201,
    );
    const registered = await hangar.request('POST', '/api/v1/mcp-servers', {
      body: { name: 'docs', url: docs.url, headers: { Authorization: { secret: 'DOCS_TOKEN' } } },
    });
    assert.equal(registered.status, 201, JSON.stringify(registered.body));
    anthropic.script(
      { toolCalls: [{ name: 'docs__search_docs', input: { query: 'workers' } }] },
      { text: 'Workers use the cache.' },
    );
    const runId = await createRun(hangar, {
      prompt: 'What do the docs say?',
      config: { worker_host: 'oz-box', mcp_servers: { docs: { warp_id: registered.body.uid } } },
    });
    const run = await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR');
    assert.equal(run.state, 'SUCCEEDED', `${JSON.stringify(run.status_message)}\n${worker.output()}`);
    assert.equal(run.status_message.message, 'Workers use the cache.');
    assert.equal(anthropic.requests[0]!.headers['x-api-key'], 'worker-key');
    assert.equal(anthropic.requests[0]!.body.model, 'claude-worker');
    assert.ok(docs.headers.some((headers) => headers.authorization === 'docs-secret'));
    assert.match(JSON.stringify(anthropic.requests[1]!.body.messages), /Docs about workers: use the cache\./);
    // The model the worker used is recorded on the run.
    const listed = await hangar.request('GET', '/agent/runs?model_id=worker-sonnet');
    assert.deepEqual(
      listed.body.runs.map((item: any) => item.run_id),
      [runId],
    );
    // The secret's value never shows in the worker's log.
    assert.ok(!worker.output().includes('docs-secret'));
  });
});
