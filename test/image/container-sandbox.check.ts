/**
 * Hangar's own image with the container sandbox (HANGAR_SANDBOX=container), checked for real under Podman: the
 * server in its container, with the engine's socket mounted and its data directory in a volume, runs a run in an
 * environment's image (the engine binds the workspace, Hangar's node and install, the harness file and the API socket
 * by the host paths the server learnt from its own container), and `hangar doctor` in the image says clearly when
 * the socket is missing or not the server's to use, when it is another engine's, and when a path has no host path.
 *
 * Not part of the suite: `.ci/run` runs it once, beside container-image.check.ts, with the image scripts/image.sh
 * built and the engines scripts/container-engines.sh prepared (HANGAR_TEST_PODMAN_HOST, and HANGAR_TEST_DOCKER_HOST
 * for the wrong-engine case):
 *
 *   HANGAR_TEST_IMAGE=$(bash scripts/image.sh) node --import tsx --test test/image/container-sandbox.check.ts
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { EngineClient } from '../../src/execution/sandbox/container/engine-client.js';
import { executionContainers, type TestEngine, testImage } from '../support/container-engines.js';
import {
  containerLog,
  dropDatabase,
  freshDatabase,
  type ImageContainer,
  imageUnderTest,
  podman,
  removeContainer,
  startImage,
} from '../support/container-image.js';
import { eventually, textEvents } from '../support/engine.js';

const DATABASE = 'hangar_image_sandbox_check';
const API_KEY = 'image-sandbox-check-bootstrap-key-0123456789';
const PODMAN_HOST = process.env.HANGAR_TEST_PODMAN_HOST ?? 'unix:///run/hangar-test/podman.sock';
const DOCKER_HOST = process.env.HANGAR_TEST_DOCKER_HOST;
/** The image's user: the socket it is given must be its own (the machine's Podman socket is root's, mode 0600). */
const HANGAR_UID = 10001;
/** A tool and a mark only the environment's image has. */
const IMAGE_RECIPE =
  "printf '#!/bin/sh\\necho image-tool-ok\\n' > /usr/local/bin/hangar-image-tool && chmod 755 /usr/local/bin/hangar-image-tool && echo HANGAR_TEST_IMAGE=yes >> /usr/lib/os-release";
const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));
const name = `hangar-image-sandbox-${process.pid}`;

let container: ImageContainer;
let sockets: string;
const relays: net.Server[] = [];
let failed = false;

function check(title: string, body: () => Promise<void>, options: { skip?: string | false } = {}): void {
  test(title, options, async () => {
    try {
      await body();
    } catch (error) {
      failed = true;
      throw error;
    }
  });
}

/**
 * A socket owned by Hangar's user that carries each connection, byte for byte, to an engine's own socket: what a
 * deployment gets with the socket's group (compose's group_add) or a rootless engine's socket of that user.
 */
async function socketFor(engineHost: string, file: string): Promise<void> {
  const target = engineHost.replace(/^unix:\/\//, '');
  // Half-open both ways: an exec's stdin ends (the task is written) long before its output does.
  const server = net.createServer({ allowHalfOpen: true }, (client) => {
    const upstream = net.connect({ path: target, allowHalfOpen: true });
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(file, resolve);
  });
  fs.chownSync(file, HANGAR_UID, HANGAR_UID);
  fs.chmodSync(file, 0o600);
  relays.push(server);
}

const api = async (method: string, route: string, body?: unknown): Promise<{ status: number; body: any }> => {
  const response = await fetch(`${container.url}/api/v1${route}`, {
    method,
    headers: { authorization: `Bearer ${API_KEY}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: response.status, body: await response.json().catch(() => undefined) };
};

/** `hangar doctor --local` in Hangar's container, with `env` over the container's own settings. */
async function doctor(env: Record<string, string>): Promise<{ code: number; output: string }> {
  // A git base doctor finds at once (a file URL): github.com, the default, is out of reach here and costs its timeout.
  const settings = { HANGAR_GIT_BASE_URL: 'file:///app', ...env };
  const flags = Object.entries(settings).flatMap(([key, value]) => ['--env', `${key}=${value}`]);
  try {
    const output = await podman('exec', ...flags, name, 'node', '/app/dist/main.js', 'doctor', '--local', '--json');
    return { code: 0, output };
  } catch (error) {
    const failure = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failure.code ?? -1, output: `${failure.stdout ?? ''}${failure.stderr ?? ''}` };
  }
}

function engineCheck(output: string): { ok: boolean; detail: string } {
  const status = JSON.parse(output.slice(output.indexOf('{'))) as {
    checks: Array<{ name: string; ok: boolean; detail: string }>;
  };
  const found = status.checks.find((entry) => entry.name === 'container engine');
  assert.ok(found, `no container engine check in ${output}`);
  return found;
}

async function runToEnd(body: Record<string, unknown>): Promise<{ runId: string; run: any }> {
  const created = await api('POST', '/agent/runs', body);
  assert.equal(created.status, 200, JSON.stringify(created.body));
  const runId: string = created.body.run_id;
  let run: any;
  await eventually(
    'the run to end',
    async () => {
      run = (await api('GET', `/agent/runs/${runId}`)).body;
      return ['SUCCEEDED', 'FAILED', 'ERROR', 'BLOCKED', 'CANCELLED'].includes(run.state);
    },
    120_000,
  );
  return { runId, run };
}

let image: string;
before(async () => {
  const podmanEngine: TestEngine = { name: 'podman', dockerHost: PODMAN_HOST, client: new EngineClient(PODMAN_HOST) };
  const leftovers = await podman('ps', '--all', '--filter', 'name=^hangar-image-sandbox-', '--format', '{{.Names}}');
  for (const leftover of leftovers.split('\n').filter(Boolean)) await removeContainer(leftover);
  image = await testImage(podmanEngine, IMAGE_RECIPE);
  // A directory the hangar user can pass (the sockets in it are its own), on the host's disk.
  sockets = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-image-sandbox-'));
  fs.chmodSync(sockets, 0o755);
  await socketFor(PODMAN_HOST, path.join(sockets, 'podman.sock'));
  if (DOCKER_HOST) await socketFor(DOCKER_HOST, path.join(sockets, 'docker.sock'));
  const databaseUrl = await freshDatabase(DATABASE);
  container = await startImage({
    image: imageUnderTest(),
    name,
    databaseUrl,
    podmanArgs: [
      // No seccomp or /proc settings: bubblewrap is not used. The data directory is the image's volume (/data).
      ...['--volume', `${sockets}:/run/hangar:ro`],
      ...['--volume', `${PODMAN_HOST.replace(/^unix:\/\//, '')}:/run/hangar-root/podman.sock`],
      ...['--volume', `${here('./container-sandbox.yaml')}:/config/hangar.yaml:ro`],
      ...['--volume', `${here('./shell-harness.mjs')}:/config/shell-harness.mjs:ro`],
      ...['--tmpfs', '/scratch'],
    ],
    env: {
      HANGAR_BOOTSTRAP_API_KEY: API_KEY,
      HANGAR_CONFIG: '/config/hangar.yaml',
      HANGAR_SANDBOX: 'container',
      DOCKER_HOST: 'unix:///run/hangar/podman.sock',
      HANGAR_DEFAULT_IMAGE: 'localhost/hangar-test/debian:bookworm',
      HANGAR_RUN_MEMORY: '256m',
    },
  });
});

after(async () => {
  if (failed) process.stderr.write(`--- the container's log ---\n${await containerLog(name)}`);
  await removeContainer(name);
  await dropDatabase(DATABASE);
  for (const relay of relays) await new Promise((resolve) => relay.close(resolve));
  if (sockets) fs.rmSync(sockets, { recursive: true, force: true });
});

check("the status says the engine answers and where the server's paths are on the host", async () => {
  const { status, body } = await api('GET', '/admin/status');
  assert.equal(status, 200, JSON.stringify(body));
  const found = body.checks.find((entry: { name: string }) => entry.name === 'container engine');
  assert.equal(found?.ok, true, JSON.stringify(body.checks));
  assert.match(found.detail, /answers \(Podman [^)]+\); this server runs in the engine's container [0-9a-f]{12}/);
  assert.match(found.detail, /\/data is \/var\/lib\/containers\/storage\/volumes\/[^ ]+\/_data on the host/);
  // Passes with a warning: networked runs cannot start from a container (egress.ts needs the host's root).
  assert.equal(found.warning, true);
  assert.match(found.detail, /Runs that ask for a network cannot start from this container/);
});

check(
  "a run in an environment's image succeeds, its harness and Hangar's node bound from the server's container",
  async () => {
    const environment = await api('POST', '/environments', { name: 'image check', docker_image: image });
    assert.equal(environment.status, 201, JSON.stringify(environment.body));
    const prompt =
      'grep HANGAR_TEST_IMAGE /etc/os-release; hangar-image-tool; id -u; pwd; ' +
      // Hangar's API through the execution's socket (the relay on the container's loopback): any answer is one.
      `node -e "fetch(process.env.HANGAR_API_URL + '/agent/runs').then((r) => console.log('api ' + r.status))"`;
    const { runId, run } = await runToEnd({ prompt, config: { environment_id: environment.body.uid } });
    assert.equal(run.state, 'SUCCEEDED', JSON.stringify(run.status_message));
    const link = await fetch(`${container.url}/api/v1/agent/runs/${runId}/transcript`, {
      headers: { authorization: `Bearer ${API_KEY}` },
      redirect: 'manual',
    });
    assert.equal(link.status, 302, JSON.stringify((await api('GET', `/agent/runs/${runId}/timeline`)).body));
    const lines = textEvents(await (await fetch(link.headers.get('location')!)).text());
    assert.deepEqual(lines, ['HANGAR_TEST_IMAGE=yes', 'image-tool-ok', String(HANGAR_UID), '/workspace', 'api 401']);
    // Its container is gone with its workspace.
    const engine: TestEngine = { name: 'podman', dockerHost: PODMAN_HOST, client: new EngineClient(PODMAN_HOST) };
    await eventually(
      'the run container to be removed',
      async () => (await executionContainers(engine, runId)).length === 0,
    );
  },
);

check('a run that asks for a network fails, saying why, rather than start with an unfiltered network', async () => {
  const { run } = await runToEnd({ prompt: 'true', config: { harness: { type: 'shell-networked' } } });
  assert.notEqual(run.state, 'SUCCEEDED');
  assert.match(JSON.stringify(run.status_message), /Could not start a container/);
});

check('doctor in the image: a socket that is not there is named, with where to mount it', async () => {
  const { code, output } = await doctor({ DOCKER_HOST: 'unix:///run/hangar/absent.sock' });
  assert.equal(code, 1, output);
  const found = engineCheck(output);
  assert.equal(found.ok, false);
  assert.match(found.detail, /^\/run\/hangar\/absent\.sock does not exist: mount the engine's socket there/);
});

check("doctor in the image: a socket the server's user may not use says so, with the way out", async () => {
  const { code, output } = await doctor({ DOCKER_HOST: 'unix:///run/hangar-root/podman.sock' });
  assert.equal(code, 1, output);
  const found = engineCheck(output);
  assert.equal(found.ok, false);
  assert.match(found.detail, /permission denied for uid 10001: give the server the socket's group/);
});

check(
  "doctor in the image: another engine's socket (Docker's, while Podman runs Hangar) is a wrong mapping, said so",
  async () => {
    const { code, output } = await doctor({ DOCKER_HOST: 'unix:///run/hangar/docker.sock' });
    assert.equal(code, 1, output);
    const found = engineCheck(output);
    assert.equal(found.ok, false);
    assert.match(found.detail, /answers \(Docker Engine [^)]+\), but this server runs in a container that the engine/);
    assert.match(found.detail, /does not know .*mount the socket of the engine that runs Hangar's container/);
  },
  { skip: DOCKER_HOST ? false : 'HANGAR_TEST_DOCKER_HOST is not set' },
);

check(
  'doctor in the image: a workspace directory on a tmpfs has no host path, and doctor says what to mount',
  async () => {
    const { code, output } = await doctor({ HANGAR_WORKSPACE_DIR: '/scratch/workspaces' });
    assert.equal(code, 1, output);
    const found = engineCheck(output);
    assert.equal(found.ok, false);
    assert.match(
      found.detail,
      /\/scratch\/workspaces is on a tmpfs of this container \(\/scratch\).*Mount it from the host/,
    );
  },
);
