import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { installedBinary } from '../harnesses/scripted-runs.js';
import { executionContainers, type TestEngine, testEngines, testImage } from '../support/container-engines.js';
import { eventually, outputTexts, waitForSignalledRun, waitForState } from '../support/engine.js';
import { AnthropicServer } from '../support/model-servers/index.js';
import { spawnKeyedServer, stopChild } from '../support/processes.js';
import { createRun } from '../support/runs.js';
import { createTestDatabase, startTestServer, type TestServer } from '../support/server.js';
import { startWorker } from '../support/workers.js';

const SHELL_HARNESS = fileURLToPath(new URL('./fixtures/shell-harness.mjs', import.meta.url));
/** A tool the host lacks and a mark in the image's os-release: what only the environment's image has. */
const IMAGE_RECIPE =
  "printf '#!/bin/sh\\necho image-tool-ok\\n' > /usr/local/bin/hangar-image-tool && chmod 755 /usr/local/bin/hangar-image-tool && echo HANGAR_TEST_IMAGE=yes >> /usr/lib/os-release";
/** Small enough that the tests' hogs reach them at once, large enough for the harness (node) itself. */
const MEMORY = '192m';
const PIDS = '64';

const { engines, skipReason } = testEngines();
const TERMINAL = ['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED'];

/** The model the oz harness talks to (on the server's side: only its commands run in the container). */
const anthropic = new AnthropicServer();
const configDirectory = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-container-config-'));
before(() => anthropic.listen());
after(async () => {
  await anthropic.close();
  fs.rmSync(configDirectory, { recursive: true, force: true });
});

/** The settings of a server whose runs go to containers on `engine`, with the shell harness and oz. */
function containerEnv(engine: TestEngine, image: string): Record<string, string> {
  const file = path.join(configDirectory, `${engine.name}.yaml`);
  fs.writeFileSync(
    file,
    YAML.stringify({
      default_model: 'sonnet-test',
      builtin_harnesses: {
        oz: { max_steps: 5 },
        ...(installedBinary('claude') ? { claude: { path: installedBinary('claude'), timeout_minutes: 3 } } : {}),
      },
      models: [
        {
          id: 'sonnet-test',
          provider: 'ANTHROPIC',
          model: 'claude-sonnet-4-20250514',
          base_url: anthropic.baseURL,
          api_key_env: 'OZ_CONTAINER_TEST_KEY',
          cost: { input: 0, output: 0 },
        },
      ],
      harnesses: {
        shell: { command: [process.execPath, SHELL_HARNESS], timeout_minutes: 5 },
        'shell-with-network': { command: [process.execPath, SHELL_HARNESS], timeout_minutes: 5, network: true },
      },
    }),
  );
  return {
    HANGAR_CONFIG: file,
    OZ_CONTAINER_TEST_KEY: 'sk-test',
    HANGAR_RUN_LEASE_SECONDS: '6',
    HANGAR_SANDBOX: 'container',
    DOCKER_HOST: engine.dockerHost,
    HANGAR_DEFAULT_IMAGE: image,
    HANGAR_RUN_MEMORY: MEMORY,
    HANGAR_RUN_PIDS: PIDS,
    // Setup with network would give the whole execution's container network (one container per execution).
    HANGAR_SETUP_NETWORK: 'false',
  };
}

async function environment(hangar: TestServer, body: Record<string, unknown>): Promise<string> {
  const response = await hangar.request('POST', '/api/v1/environments', {
    body: { name: `env ${Math.random()}`, ...body },
  });
  assert.equal(response.status, 201, JSON.stringify(response.body));
  return response.body.uid;
}

async function runShell(hangar: TestServer, command: string, config: Record<string, unknown> = {}) {
  const runId = await createRun(hangar, { prompt: command, config: { harness: { type: 'shell' }, ...config } });
  const run = await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED');
  const lines = run.state === 'SUCCEEDED' ? await outputTexts(hangar, runId) : [];
  return { runId, run, lines };
}

async function timeline(hangar: TestServer, runId: string): Promise<Array<{ event_type: string; payload?: any }>> {
  return (await hangar.request('GET', `/agent/runs/${runId}/timeline`)).body.events;
}

for (const [index, engine] of engines.entries()) {
  // The core behaviours on every engine; the rest on the first one only, to keep CI lean.
  const everyEngine = { skip: skipReason };
  const firstEngine = { skip: skipReason || (index > 0 ? 'covered on the first engine' : false) };
  describe(`container sandbox on ${engine.name}`, everyEngine, () => {
    let hangar: TestServer;
    let image: string;
    before(async () => {
      image = await testImage(engine, IMAGE_RECIPE);
      hangar = await startTestServer(containerEnv(engine, image));
    });
    after(() => hangar?.stop());

    test("setup and the agent run in the environment's image, as a non-root user without network", async () => {
      const environmentId = await environment(hangar, {
        docker_image: image,
        // Below the operator's limits (192m, 64), which are also the maximums here.
        limits: { memory: '160m', pids: 48 },
        // Outside the workspace: only there for the agent if setup ran in the same container.
        setup_commands: [
          "mkdir -p /tmp/tools && printf '#!/bin/sh\\necho setup-tool-ok\\n' > /tmp/tools/setup-tool && chmod +x /tmp/tools/setup-tool",
        ],
      });
      const { runId, run, lines } = await runShell(
        hangar,
        'grep HANGAR_TEST_IMAGE /etc/os-release; hangar-image-tool; /tmp/tools/setup-tool; id -u; pwd; ls /sys/class/net; cat /sys/fs/cgroup/memory.max /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null | head -1',
        { environment_id: environmentId },
      );
      assert.equal(run.state, 'SUCCEEDED', JSON.stringify(run));
      assert.deepEqual(lines, [
        'HANGAR_TEST_IMAGE=yes',
        'image-tool-ok',
        'setup-tool-ok',
        '64000',
        '/workspace',
        'lo',
        String(160 * 1024 * 1024),
      ]);
      const ready = (await timeline(hangar, runId)).find((event) => event.event_type === 'worker_container_ready');
      assert.equal(ready?.payload?.sandbox, 'container');
      assert.equal(ready?.payload?.image, image);
      assert.equal(ready?.payload?.network, false);
      // The environment's request, applied (the cgroup above) and shown.
      assert.equal(ready?.payload?.limits?.memory, '160 MiB');
      assert.equal(ready?.payload?.limits?.pids, 48);
      assert.deepEqual(ready?.payload?.limits?.requested, { memory: '160m', pids: 48 });
      assert.deepEqual(await executionContainers(engine, runId), [], 'the container is removed with the workspace');
    });

    test("with or without network, the API is on the container's loopback; with it, neither the host nor private or link-local addresses are", async (t) => {
      // A service of the host's at its own non-loopback address: what a networked run must not reach.
      const hostAddress = Object.values(os.networkInterfaces())
        .flatMap((entries) => entries ?? [])
        .find((entry) => entry.family === 'IPv4' && !entry.internal)?.address;
      assert.ok(hostAddress, 'the host has a non-loopback IPv4 address');
      let reached = 0;
      const service = net.createServer((socket) => {
        reached++;
        socket.destroy();
      });
      await new Promise<void>((resolve) => service.listen(0, '0.0.0.0', resolve));
      t.after(() => service.close());
      const port = (service.address() as net.AddressInfo).port;
      const probe = [
        "const net = require('node:net');",
        'const reach = (host, port) => new Promise((done) => {',
        '  const socket = net.connect({ host, port });',
        "  socket.setTimeout(5000, () => { socket.destroy(); done('timeout'); });",
        "  socket.on('connect', () => { socket.destroy(); done('open'); });",
        "  socket.on('error', (error) => done(error.code));",
        '});',
        '(async () => {',
        `  console.log('host ' + (await reach('${hostAddress}', ${port})));`,
        "  console.log('metadata ' + (await reach('169.254.169.254', 80)));",
        "  console.log('private ' + (await reach('10.0.0.1', 80)));",
        "  const answer = await fetch(process.env.HANGAR_API_URL + '/harness-support/report-artifact', {",
        "    method: 'POST',",
        "    headers: { authorization: 'Bearer ' + process.env.HANGAR_TASK_TOKEN, 'content-type': 'application/json' },",
        "    body: JSON.stringify({ artifact_type: 'PLAN', data: { title: 'From the container', content: 'relayed' } }),",
        '  });',
        "  console.log('api ' + answer.status);",
        '})();',
      ].join('\n');
      const command = `/opt/hangar/bin/node -e '${probe.replaceAll("'", '"')}'`;

      const isolated = await runShell(hangar, command);
      assert.equal(isolated.run.state, 'SUCCEEDED', JSON.stringify(isolated.run));
      assert.equal(isolated.lines.at(-1), 'api 201', 'the API without any network');
      assert.ok(!isolated.lines.some((line) => line.endsWith(' open')), isolated.lines.join());

      const networked = await runShell(hangar, command, { harness: { type: 'shell-with-network' } });
      assert.equal(networked.run.state, 'SUCCEEDED', JSON.stringify(networked.run));
      // Refused by the container's own rules (a reject, at once), not merely unrouted.
      assert.deepEqual(networked.lines, [
        'host ECONNREFUSED',
        'metadata ECONNREFUSED',
        'private ECONNREFUSED',
        'api 201',
      ]);
      assert.equal(reached, 0, "nothing reached the host's service");
      const ready = (await timeline(hangar, networked.runId)).find(
        (event) => event.event_type === 'worker_container_ready',
      );
      assert.equal(ready?.payload?.egress, 'filtered');
      assert.equal(ready?.payload?.api, 'relayed');
      assert.ok(
        networked.run.artifacts.some((artifact: any) => artifact.artifact_type === 'PLAN'),
        JSON.stringify(networked.run.artifacts),
      );
    });

    test('a run that exceeds its memory limit fails with resource_limit_exceeded, saying the limit', async () => {
      const { run } = await runShell(
        hangar,
        '/opt/hangar/bin/node -e "const a = []; for (;;) a.push(Buffer.alloc(1 << 20, 1))"',
      );
      assert.equal(run.state, 'FAILED', JSON.stringify(run));
      assert.equal(run.status_message?.error_code, 'resource_limit_exceeded');
      assert.match(run.status_message?.message, /exceeded its memory limit of 192 MiB/);
    });

    test('a run that exceeds its process limit fails with resource_limit_exceeded, saying the limit', async () => {
      const { run } = await runShell(hangar, 'for i in $(seq 200); do sleep 300 >/dev/null 2>&1 & done; exit 3');
      assert.equal(run.state, 'FAILED', JSON.stringify(run));
      assert.equal(run.status_message?.error_code, 'resource_limit_exceeded');
      assert.match(run.status_message?.message, /exceeded its process limit of 64 processes/);
    });

    test('cancel kills the run and removes its container', async () => {
      const runId = await createRun(hangar, { prompt: 'sleep 300', config: { harness: { type: 'shell' } } });
      await waitForState(hangar, runId, 'INPROGRESS');
      assert.equal((await executionContainers(engine, runId)).length, 1);
      const response = await hangar.request('POST', `/agent/runs/${runId}/cancel`);
      assert.equal(response.status, 200, JSON.stringify(response.body));
      await waitForState(hangar, runId, 'CANCELLED');
      await eventually('the container is gone', async () => (await executionContainers(engine, runId)).length === 0);
    });

    test(
      'an image that cannot be pulled fails the run with environment_setup_failed, naming it',
      firstEngine,
      async () => {
        // A registry that is not there (port 1 of loopback): a localhost/ image is never pulled (issue 47.2).
        const missing = '127.0.0.1:1/hangar-test/no-such-image:missing';
        const environmentId = await environment(hangar, { docker_image: missing });
        const { runId, run } = await runShell(hangar, 'true', { environment_id: environmentId });
        assert.equal(run.state, 'FAILED', JSON.stringify(run));
        assert.equal(run.status_message?.error_code, 'environment_setup_failed');
        assert.match(
          run.status_message?.message,
          /Could not pull the image 127\.0\.0\.1:1\/hangar-test\/no-such-image:missing: \S/,
        );
        const types = (await timeline(hangar, runId)).map((event) => event.event_type);
        assert.ok(types.includes('container_image_pull_started'), types.join());
        assert.deepEqual(await executionContainers(engine, runId), []);
      },
    );
    test(
      'the debug window keeps the container: the debug agent runs in the image, beside what setup left',
      firstEngine,
      async () => {
        const environmentId = await environment(hangar, {
          docker_image: image,
          setup_commands: ['touch /tmp/from-setup; exit 7'],
          failure_session_retention_minutes: 5,
        });
        const runId = await createRun(hangar, {
          prompt: 'true',
          config: { harness: { type: 'shell' }, environment_id: environmentId },
        });
        const failed = await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR');
        assert.equal(failed.status_message?.error_code, 'environment_setup_failed', JSON.stringify(failed));
        assert.equal((await executionContainers(engine, runId)).length, 1, 'kept for the debug window');
        const followup = await hangar.request('POST', `/agent/runs/${runId}/followups`, { body: { message: 'why?' } });
        assert.equal(followup.status, 200, JSON.stringify(followup.body));
        await eventually('the debug agent answered', async () =>
          (await outputTexts(hangar, runId).catch(() => [] as string[])).includes(
            'debugging in image-tool-ok /tmp/from-setup',
          ),
        );
        await hangar.server.engine!.debugSessions.close(runId);
        assert.deepEqual(await executionContainers(engine, runId), [], 'removed when the window closes');
      },
    );

    test("a follow-up's execution runs in the same image", firstEngine, async () => {
      const environmentId = await environment(hangar, { docker_image: image });
      const { runId, run } = await runShell(hangar, 'echo first', { environment_id: environmentId });
      assert.equal(run.state, 'SUCCEEDED', JSON.stringify(run));
      const followup = await hangar.request('POST', `/agent/runs/${runId}/followups`, {
        body: { message: 'hangar-image-tool' },
      });
      assert.equal(followup.status, 200, JSON.stringify(followup.body));
      await eventually('the follow-up ran in the image', async () =>
        (await outputTexts(hangar, runId).catch(() => [] as string[])).includes('image-tool-ok'),
      );
    });

    test(
      "the oz harness's commands run in the container; its file tools and artifacts use the workspace",
      firstEngine,
      async () => {
        anthropic.script(
          { toolCalls: [{ name: 'write_file', input: { path: 'notes.txt', content: 'from oz\n' } }] },
          { toolCalls: [{ name: 'run_command', input: { command: 'hangar-image-tool; cat notes.txt; pwd' } }] },
          {
            toolCalls: [
              { name: 'report_artifact', input: { artifact_type: 'FILE', path: 'notes.txt', description: 'notes' } },
            ],
          },
          { text: 'Done in the image.' },
        );
        const runId = await createRun(hangar, { prompt: 'Use the image tool', config: { harness: { type: 'oz' } } });
        const run = await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR');
        assert.equal(run.state, 'SUCCEEDED', JSON.stringify(run.status_message));
        const toolResults = JSON.stringify(anthropic.requests.at(-2)!.body.messages);
        assert.match(toolResults, /image-tool-ok\\+nfrom oz\\+n\/workspace/);
        assert.ok(
          run.artifacts.some((artifact: any) => artifact.artifact_type === 'FILE'),
          JSON.stringify(run.artifacts),
        );
      },
    );

    test('the claude CLI runs in the container and reaches the model through the relayed API', {
      skip: firstEngine.skip || (installedBinary('claude') ? false : 'the claude CLI is not installed here'),
    }, async () => {
      anthropic.script(
        {
          toolCalls: [{ name: 'Bash', input: { command: 'hangar-image-tool; pwd', description: 'Use the tool' } }],
        },
        { text: 'The image tool said ok.' },
      );
      const before = anthropic.requests.length;
      const runId = await createRun(hangar, {
        prompt: 'Use the image tool',
        config: { harness: { type: 'claude', model_id: 'sonnet-test' } },
      });
      // The CLI starts slowly on a busy machine; the wait is a ceiling, not a measure.
      const run = await waitForSignalledRun(
        hangar,
        runId,
        (current) => TERMINAL.includes(current.state),
        180_000,
      ).catch((error) => {
        console.log('model requests', anthropic.requests.length - before);
        throw error;
      });
      assert.equal(run.state, 'SUCCEEDED', JSON.stringify(run.status_message));
      const calls = anthropic.requests.slice(before).filter((request) => request.method === 'POST');
      assert.match(JSON.stringify(calls.at(-1)!.body.messages), /image-tool-ok\\n\/workspace/);
      // The model key stays on the server: the CLI only had the task token.
      assert.ok(calls.every((call) => call.headers['x-api-key'] === 'sk-test'));
    });

    test('a self-hosted worker with HANGAR_SANDBOX=container runs its run in the image', firstEngine, async (t) => {
      const worker = startWorker(hangar, 'box-container', { env: containerEnv(engine, image) });
      t.after(async () => {
        await stopChild(worker.child, 'SIGTERM');
        fs.rmSync(worker.dataDir, { recursive: true, force: true });
      });
      const environmentId = await environment(hangar, { docker_image: image });
      const runId = await createRun(hangar, {
        prompt: 'grep HANGAR_TEST_IMAGE /etc/os-release; hangar-image-tool; pwd',
        config: { harness: { type: 'shell' }, environment_id: environmentId, worker_host: 'box-container' },
      });
      const run = await waitForSignalledRun(hangar, runId, (current) => TERMINAL.includes(current.state), 120_000);
      assert.equal(run.state, 'SUCCEEDED', `${JSON.stringify(run.status_message)} ${worker.output().slice(-2000)}`);
      assert.deepEqual(await outputTexts(hangar, runId), ['HANGAR_TEST_IMAGE=yes', 'image-tool-ok', '/workspace']);
      const ready = (await timeline(hangar, runId)).find((event) => event.event_type === 'worker_container_ready');
      assert.equal(ready?.payload?.sandbox, 'container');
      assert.equal(ready?.payload?.image, image);
      assert.deepEqual(await executionContainers(engine, runId), []);
    });

    test('a server killed with SIGKILL leaves no container behind once it is back', firstEngine, async (t) => {
      const database = await createTestDatabase();
      t.after(() => database.drop());
      const doomed = await spawnKeyedServer(database, {
        ...containerEnv(engine, image),
        HANGAR_RUN_LEASE_SECONDS: '3',
      });
      t.after(() => stopChild(doomed.child, 'SIGKILL'));
      const response = await doomed.hangar.request('POST', '/agent/runs', {
        body: { prompt: 'sleep 300', config: { harness: { type: 'shell' } } },
      });
      assert.equal(response.status, 200, JSON.stringify(response.body));
      const runId = response.body.run_id as string;
      // The run is in progress in its container.
      await waitForState(doomed.hangar, runId, 'INPROGRESS');
      await stopChild(doomed.child, 'SIGKILL');
      assert.equal((await executionContainers(engine, runId)).length, 1, 'the engine keeps it after the kill');

      const survivor = await startTestServer(doomed.env, { database });
      t.after(() => survivor.stop());
      await waitForState(survivor, runId, 'ERROR');
      await eventually(
        'the dead server’s container is removed',
        async () => (await executionContainers(engine, runId)).length === 0,
      );
    });
  });
}

// Without any engine the suite says why it skips, once.
if (engines.length === 0) test('container sandbox', { skip: skipReason }, () => undefined);
