/**
 * The OCI image, checked for real with Podman: it starts against PostgreSQL, becomes ready, runs a prompt with the
 * example command harness, runs as its unprivileged user, and stops cleanly on SIGTERM within the grace period.
 *
 * Not part of the suite (`.test.ts` files run twice in CI, on PGlite and on PostgreSQL; the image only ever runs
 * on PostgreSQL here): `.ci/run` runs it once, after scripts/image.sh has built or found the image:
 *
 *   HANGAR_TEST_IMAGE=$(bash scripts/image.sh) node --import tsx --test test/image/container-image.check.ts
 *
 * Needs root's Podman (scripts/container-engines.sh prepares it) and the PostgreSQL of TEST_DATABASE_URL (default
 * the machine's, 127.0.0.1:5432), where it creates and drops its own database, hangar_image_check.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
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
import { eventually } from '../support/engine.js';

const DATABASE = 'hangar_image_check';
/** The example harness, offline and networked. */
const OPERATOR_FILE = fileURLToPath(new URL('./hangar.yaml', import.meta.url));
const API_KEY = 'image-check-bootstrap-key-0123456789';
const STOP_TIMEOUT_SECONDS = 30;
const name = `hangar-image-check-${process.pid}`;

let container: ImageContainer;
let failed = false;

/** A test whose failure also prints the container's log (at the end, in `after`). */
function check(title: string, body: () => Promise<void>): void {
  test(title, async () => {
    try {
      await body();
    } catch (error) {
      failed = true;
      throw error;
    }
  });
}

const api = (method: string, route: string, body?: unknown) =>
  fetch(`${container.url}/api/v1${route}`, {
    method,
    headers: { authorization: `Bearer ${API_KEY}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });

before(async () => {
  const image = imageUnderTest();
  // Containers a killed earlier check left behind (only this check's names start so).
  const leftovers = await podman('ps', '--all', '--filter', 'name=^hangar-image-check-', '--format', '{{.Names}}');
  for (const leftover of leftovers.split('\n').filter(Boolean)) await removeContainer(leftover);
  const databaseUrl = await freshDatabase(DATABASE);
  container = await startImage({
    image,
    name,
    databaseUrl,
    stopTimeoutSeconds: STOP_TIMEOUT_SECONDS,
    // What compose.yaml gives Hangar's container so that bubblewrap works inside it; with HANGAR_SANDBOX=bwrap a
    // start where it does not is an error rather than a fallback to the unconfined process mode.
    podmanArgs: [
      ...['--security-opt', 'seccomp=unconfined', '--security-opt', 'systempaths=unconfined'],
      ...['--device', '/dev/net/tun', '--volume', `${OPERATOR_FILE}:/config/hangar.yaml:ro`],
    ],
    env: { HANGAR_BOOTSTRAP_API_KEY: API_KEY, HANGAR_CONFIG: '/config/hangar.yaml', HANGAR_SANDBOX: 'bwrap' },
  });
  process.stdout.write(`# ${image}: ready after ${Math.round(container.readyAfterMs)} ms\n`);
});

after(async () => {
  if (failed) process.stderr.write(`--- the container's log ---\n${await containerLog(name)}`);
  await removeContainer(name);
  await dropDatabase(DATABASE);
});

check("the image's HEALTHCHECK passes once the server is ready", async () => {
  // `podman healthcheck run` runs the image's own HEALTHCHECK command in the container; exit 0 is healthy.
  assert.equal(await podman('inspect', '--format', '{{.Config.Healthcheck.Test}}', name).then(Boolean), true);
  await podman('healthcheck', 'run', name);
});

check('the server runs as the unprivileged hangar user, tini as PID 1 and the server below it', async () => {
  assert.equal(await podman('exec', name, 'id', '-un'), 'hangar');
  // Seen from the host (rootful Podman maps no user namespace): the container's first process and its child.
  const init = Number(await podman('inspect', '--format', '{{.State.Pid}}', name));
  const uidOf = (pid: number) => {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    return Number(/^Uid:\s+(\d+)\s+(\d+)/m.exec(status)![2]);
  };
  const commandOf = (pid: number) => fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  assert.equal(commandOf(init)[0], '/usr/bin/tini');
  const [server] = fs.readFileSync(`/proc/${init}/task/${init}/children`, 'utf8').trim().split(' ').map(Number);
  assert.deepEqual(commandOf(server!).slice(0, 3), ['node', '/app/dist/main.js', 'serve']);
  assert.equal(uidOf(init), 10001);
  assert.equal(uidOf(server!), 10001);
});

async function runToEnd(body: Record<string, unknown>): Promise<any> {
  const created = await api('POST', '/agent/runs', body);
  assert.equal(created.status, 200, await created.clone().text());
  const { run_id: runId } = (await created.json()) as { run_id: string };
  let run: any;
  await eventually(
    'the run to end',
    async () => {
      run = await (await api('GET', `/agent/runs/${runId}`)).json();
      return ['SUCCEEDED', 'FAILED', 'ERROR', 'BLOCKED', 'CANCELLED'].includes(run.state);
    },
    60_000,
  );
  return run;
}

check('a run with the example command harness succeeds, in bubblewrap', async () => {
  const log = await containerLog(name);
  assert.doesNotMatch(log, /NOT isolated/);
  const run = await runToEnd({ prompt: 'hello from the image check' });
  assert.equal(run.state, 'SUCCEEDED', JSON.stringify(run.status_message));
  assert.equal(run.status_message?.message, 'Echoed the prompt');
});

check("a networked run's sandbox gets its network from a server that is not root", async () => {
  const run = await runToEnd({ prompt: 'hello with a network', config: { harness: { type: 'echo-networked' } } });
  assert.equal(run.state, 'SUCCEEDED', JSON.stringify(run.status_message));
});

check('SIGTERM stops the server cleanly within the grace period', async () => {
  // `podman stop` sends SIGTERM (to tini, which forwards it) and SIGKILL only after the stop timeout; a kill would
  // show as exit code 137. Exit 0 and the server's own shutdown line mean Hangar ended by itself in time.
  await podman('stop', '--time', String(STOP_TIMEOUT_SECONDS), name);
  assert.equal(await podman('inspect', '--format', '{{.State.ExitCode}}', name), '0');
  const log = await containerLog(name);
  assert.match(log, /"signal":"SIGTERM".*"msg":"shutting down"/);
});
