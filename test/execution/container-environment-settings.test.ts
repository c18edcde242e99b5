/**
 * An environment's container settings through a real server (`hangar serve`) whose engine is a real HTTP server
 * speaking the Engine API's pull (no registry is reachable here): limit requests within the operator's maximums, and
 * registry credentials from a team secret, which reach the engine's pull and nothing else, the logs least of all.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import YAML from 'yaml';
import { waitForState } from '../support/engine.js';
import { type KeyedServer, spawnKeyedServer, stopChild } from '../support/processes.js';
import { PullOnlyEngine } from '../support/pull-only-engine.js';
import { createRun } from '../support/runs.js';
import { createTestDatabase, startTestServer, type TestDatabase } from '../support/server.js';
import { startWorker } from '../support/workers.js';

const REGISTRY_PASSWORD = 'registry-token-7f3a9c1e55d2';
const engine = new PullOnlyEngine();
const engineAddress = engine.listen();
let database: TestDatabase;
let server: KeyedServer;
let configDirectory: string;

function api(method: string, route: string, body?: unknown): Promise<{ status: number; body: any }> {
  return server.hangar.request(method, route, { body });
}

function waitForTerminal(runId: string): Promise<any> {
  return waitForState(server.hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED');
}

before(async () => {
  database = await createTestDatabase();
  configDirectory = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-environment-settings-'));
  const file = path.join(configDirectory, 'hangar.yaml');
  fs.writeFileSync(file, YAML.stringify({ harnesses: { noop: { command: ['/bin/true'] } } }));
  server = await spawnKeyedServer(database, {
    HANGAR_CONFIG: file,
    HANGAR_LOG_LEVEL: 'debug',
    HANGAR_SANDBOX: 'container',
    DOCKER_HOST: await engineAddress,
    HANGAR_RUN_MEMORY: '1g',
    HANGAR_RUN_MEMORY_MAX: '2g',
    HANGAR_RUN_CPUS_MAX: '2',
  });
});

after(async () => {
  if (server) await stopChild(server.child, 'SIGKILL');
  await engine.close();
  await database?.drop();
  fs.rmSync(configDirectory, { recursive: true, force: true });
});

test("limit requests above the operator's maximums are refused with 400 naming the maximum; those within are kept", async () => {
  const above = await api('POST', '/environments', { name: 'Too big', limits: { memory: '4g' } });
  assert.equal(above.status, 400, JSON.stringify(above.body));
  assert.match(JSON.stringify(above.body), /limits\.memory 4g is above this server's maximum of 2 GiB/);
  const cpus = await api('POST', '/environments', { name: 'Too many CPUs', limits: { cpus: 3 } });
  assert.equal(cpus.status, 400);
  assert.match(JSON.stringify(cpus.body), /HANGAR_RUN_CPUS_MAX/);
  // The pids maximum defaults to the pids limit (1024): an environment may ask for less, not more.
  assert.equal((await api('POST', '/environments', { name: 'Pids', limits: { pids: 2048 } })).status, 400);
  assert.equal((await api('POST', '/environments', { name: 'Size', limits: { memory: 'lots' } })).status, 400);

  const within = await api('POST', '/environments', {
    name: 'Within',
    limits: { memory: '1536m', cpus: 1.5, pids: 256 },
  });
  assert.equal(within.status, 201, JSON.stringify(within.body));
  const shown = await api('GET', `/environments/${within.body.uid}`);
  assert.deepEqual(shown.body.config.limits, { memory: '1536m', cpus: 1.5, pids: 256 });
  // An update is held to the same maximums.
  const update = await api('PUT', `/environments/${within.body.uid}`, { name: 'Within', limits: { memory: '3g' } });
  assert.equal(update.status, 400);
});

test('registry credentials from a team secret reach the engine with the pull, and neither the run, its timeline nor the logs', async () => {
  assert.equal((await api('POST', '/secrets', { name: 'REGISTRY', value: `robot:${REGISTRY_PASSWORD}` })).status, 201);
  const environment = await api('POST', '/environments', {
    name: 'Private image',
    docker_image: 'registry.example.test/acme/private:1.2',
    registry_secret_name: 'REGISTRY',
  });
  assert.equal(environment.status, 201, JSON.stringify(environment.body));
  const created = await api('POST', '/agent/runs', {
    prompt: 'anything',
    config: { harness: { type: 'noop' }, environment_id: environment.body.uid },
  });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  const runId = created.body.run_id;
  const run = await waitForTerminal(runId);
  assert.equal(run.state, 'FAILED', JSON.stringify(run));
  assert.equal(run.status_message.error_code, 'environment_setup_failed');
  assert.match(
    run.status_message.message,
    /Could not pull the image registry\.example\.test\/acme\/private:1\.2: unauthorized/,
  );

  assert.deepEqual(engine.pulls.at(-1), {
    fromImage: 'registry.example.test/acme/private',
    tag: '1.2',
    auth: { username: 'robot', password: REGISTRY_PASSWORD, serveraddress: 'registry.example.test' },
  });
  const timeline = await api('GET', `/agent/runs/${runId}/timeline`);
  assert.ok(timeline.body.events.some((event: any) => event.event_type === 'container_image_pull_started'));
  for (const [where, text] of [
    ['the run', JSON.stringify(run)],
    ['the timeline', JSON.stringify(timeline.body)],
    ['the server log', server.output()],
  ] as Array<[string, string]>)
    assert.ok(!text.includes(REGISTRY_PASSWORD), `the registry password is in ${where}`);
  assert.match(server.output(), new RegExp(`run ${runId} ended FAILED`), 'the log covers the run');
  // The start summary names the container sandbox (it once said "unusable": it was resolved without its settings).
  assert.match(server.output(), /"sandbox":"container"/);

  // A secret that does not exist fails the run before any pull, naming the secret.
  const missing = await api('POST', '/environments', {
    name: 'Missing secret',
    docker_image: 'registry.example.test/acme/private:1.2',
    registry_secret_name: 'NO_SUCH_SECRET',
  });
  const pulls = engine.pulls.length;
  const second = await api('POST', '/agent/runs', {
    prompt: 'anything',
    config: { harness: { type: 'noop' }, environment_id: missing.body.uid },
  });
  const failed = await waitForTerminal(second.body.run_id);
  assert.equal(failed.status_message.error_code, 'environment_setup_failed');
  assert.match(failed.status_message.message, /team secret NO_SUCH_SECRET, which does not exist/);
  assert.equal(engine.pulls.length, pulls);
});

test("a self-hosted worker's container sandbox pulls with the registry secret its assignment carries", async (t) => {
  const hub = await startTestServer({ HANGAR_CONFIG: path.join(configDirectory, 'hangar.yaml') });
  t.after(() => hub.stop());
  const worker = startWorker(hub, 'box-registry', {
    env: {
      HANGAR_CONFIG: path.join(configDirectory, 'hangar.yaml'),
      HANGAR_SANDBOX: 'container',
      DOCKER_HOST: await engineAddress,
    },
  });
  t.after(async () => {
    await stopChild(worker.child, 'SIGKILL');
    fs.rmSync(worker.dataDir, { recursive: true, force: true });
  });
  assert.equal(
    (
      await hub.request('POST', '/api/v1/secrets', {
        body: { name: 'WORKER_REGISTRY', value: 'box:worker-pull-token' },
      })
    ).status,
    201,
  );
  const environment = await hub.request('POST', '/api/v1/environments', {
    body: {
      name: 'Worker image',
      docker_image: 'registry.example.test/acme/worker:7',
      registry_secret_name: 'WORKER_REGISTRY',
    },
  });
  assert.equal(environment.status, 201, JSON.stringify(environment.body));
  const runId = await createRun(hub, {
    prompt: 'anything',
    config: { harness: { type: 'noop' }, environment_id: environment.body.uid, worker_host: 'box-registry' },
  });
  const run = await waitForState(hub, runId, 'FAILED', 'SUCCEEDED', 'ERROR');
  assert.equal(run.status_message?.error_code, 'environment_setup_failed', JSON.stringify(run));
  assert.deepEqual(engine.pulls.find((pull) => pull.fromImage === 'registry.example.test/acme/worker')?.auth, {
    username: 'box',
    password: 'worker-pull-token',
    serveraddress: 'registry.example.test',
  });
});
