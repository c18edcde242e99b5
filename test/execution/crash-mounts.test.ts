import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import YAML from 'yaml';
import { resolveSandboxMode } from '../../src/execution/sandbox/index.js';
import { BASE_IMAGE, testEngines } from '../support/container-engines.js';
import { eventually, outputTexts, waitForState } from '../support/engine.js';
import { GitFixtures } from '../support/git.js';
import { listensOn } from '../support/listening.js';
import { spawnKeyedServer, stopChild } from '../support/processes.js';
import { createRun, spawnedServerClient } from '../support/runs.js';
import { createTestDatabase, freePort, type TestDatabase } from '../support/server.js';
import { trackServerProcess } from '../support/server-processes.js';
import { HANGAR_FROM_SOURCES } from '../support/typescript.js';

// Issue 48, item 3: a warm workspace's overlay survives a SIGKILL of its server, and the restarted server answered
// /readyz while it was still mounted; its sweep unmounted it 0.3-0.5 s later. Ready now means swept.
const SHELL_HARNESS = fileURLToPath(new URL('./fixtures/shell-harness.mjs', import.meta.url));
const rootSkip = process.getuid?.() === 0 ? false : 'only a root server mounts overlays';
const bwrapSkip = resolveSandboxMode(undefined).mode.kind === 'bwrap' ? false : 'bwrap does not work on this machine';
const { engines, skipReason: containerSkip } = testEngines();

/** The mount points of this machine's mount table under `directory` (/proc/self/mountinfo's fifth field). */
function mountsUnder(directory: string): string[] {
  const real = fs.realpathSync(directory);
  return fs
    .readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((line) => line.split(' ')[4] ?? '')
    .filter((point) => point.startsWith(`${real}/`));
}

/**
 * On PostgreSQL, until the run's lease passes, another replica may still be executing it: no server may remove its
 * workspace before then. Waits for that by the database's clock (the lease is HANGAR_RUN_LEASE_SECONDS long).
 */
async function leasePassed(databaseUrl: string | undefined, runId: string): Promise<void> {
  if (!databaseUrl) return; // PGlite: one process owns the data directory, so the restarted server is the only one.
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    // Nothing signals a lease passing: it is a time in the database.
    await eventually('the killed server’s lease on the run has passed', async () => {
      const { rows } = await client.query(
        'SELECT lease_expires_at < clock_timestamp() AS passed FROM runs WHERE id = $1',
        [runId],
      );
      return rows[0]?.passed === true;
    });
  } finally {
    await client.end();
  }
}

/**
 * Starts `hangar serve` and asks /readyz again the moment each answer arrives (the sweep takes milliseconds under
 * bwrap): `look` runs at the first 200, before anything else.
 */
async function startWatchingReadiness(
  env: Record<string, string>,
  look: () => string[],
): Promise<{ child: ChildProcess; url: string; atReady: string[] }> {
  const port = await freePort();
  let output = '';
  const child = spawn(process.execPath, [...HANGAR_FROM_SOURCES, 'serve'], {
    env: { ...process.env, HOST: '127.0.0.1', PORT: String(port), HANGAR_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // A server process that moves runs no signal here tells of: the waits on them poll while it runs.
  trackServerProcess(child);
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const url = `http://127.0.0.1:${port}`;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`the server exited: ${output}`);
    const ready = await fetch(`${url}/readyz`).then(
      (response) => response.ok,
      () => false,
    );
    if (!ready) continue;
    const atReady = look();
    // The answer was this server's own, not another test's on the same port.
    assert.ok(listensOn(child.pid!, port), `another process answered on port ${port}`);
    return { child, url, atReady };
  }
}

const sandboxes = [
  { name: 'bwrap', skip: rootSkip || bwrapSkip, env: { HANGAR_SANDBOX: 'bwrap' } },
  ...engines.map((engine) => ({
    name: `container on ${engine.name}`,
    skip: rootSkip || containerSkip,
    env: {
      HANGAR_SANDBOX: 'container',
      DOCKER_HOST: engine.dockerHost,
      HANGAR_DEFAULT_IMAGE: BASE_IMAGE,
      HANGAR_SETUP_NETWORK: 'false',
    } as Record<string, string>,
  })),
];

for (const sandbox of sandboxes) {
  describe(`a warm workspace after a crash, ${sandbox.name}`, { skip: sandbox.skip, timeout: 240_000 }, () => {
    const git = new GitFixtures();
    let database: TestDatabase;
    let env: Record<string, string>;
    let server: ChildProcess | undefined;
    before(async () => {
      git.createRepo('acme', 'app', { 'README.md': '# app\n' });
      database = await createTestDatabase();
      const operatorFile = path.join(database.dataDir, '..', `${path.basename(database.dataDir)}.yaml`);
      fs.writeFileSync(
        operatorFile,
        YAML.stringify({
          default_harness: 'shell',
          harnesses: { shell: { command: [process.execPath, SHELL_HARNESS], timeout_minutes: 10 } },
        }),
      );
      env = {
        ...sandbox.env,
        HANGAR_CONFIG: operatorFile,
        HANGAR_GIT_BASE_URL: git.baseUrl,
        HANGAR_SNAPSHOT_TTL: '1h',
        HANGAR_RUN_LEASE_SECONDS: '4',
        TMPDIR: os.tmpdir(),
      };
    });
    after(async () => {
      if (server) await stopChild(server, 'SIGTERM');
      await database?.drop();
      fs.rmSync(`${database.dataDir}.yaml`, { force: true });
      git.remove();
    });

    test('the restarted server is ready only once the killed execution’s overlay is gone', async () => {
      const first = await spawnKeyedServer(database, env);
      server = first.child;
      const hangar = first.hangar;
      const created = await hangar.request('POST', '/api/v1/environments', {
        body: {
          name: 'warm',
          github_repos: [{ owner: 'acme', repo: 'app' }],
          setup_commands: ['echo set-up > app/built'],
        },
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const config = { environment_id: created.body.uid };
      const cold = await createRun(hangar, { prompt: 'cat app/built', config });
      assert.equal((await waitForState(hangar, cold, 'SUCCEEDED', 'FAILED', 'ERROR')).state, 'SUCCEEDED');
      // The warm run holds its workspace, mounted over the snapshot, until the server dies.
      const warm = await createRun(hangar, { prompt: 'echo waiting; exec sleep 600', config });
      // No transcript yet is a 404 (outputTexts throws): not working yet.
      await eventually('the warm run is working', async () =>
        (await outputTexts(hangar, warm).catch(() => [] as string[])).includes('waiting'),
      );
      const workspaces = path.join(database.dataDir, 'workspaces');
      assert.ok(
        mountsUnder(workspaces).some((point) => point.includes(warm)),
        'the warm workspace is an overlay mount',
      );
      await stopChild(first.child, 'SIGKILL');
      assert.ok(mountsUnder(workspaces).length > 0, 'the mount outlives its server');
      await leasePassed(database.databaseUrl, warm);

      const second = await startWatchingReadiness(first.env, () => mountsUnder(workspaces));
      server = second.child;
      assert.deepEqual(second.atReady, [], 'nothing is mounted under the workspace root once ready');
      const restarted = spawnedServerClient(second.url, first.apiKey);
      const again = await createRun(restarted, { prompt: 'cat app/built', config });
      assert.equal((await waitForState(restarted, again, 'SUCCEEDED', 'FAILED', 'ERROR')).state, 'SUCCEEDED');
    });
  });
}
