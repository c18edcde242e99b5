import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { loadConfig } from '../../src/config.js';
import { resolveSandboxMode } from '../../src/execution/sandbox/index.js';
import { OWN_WORKSPACE_BASE, ownWorkspaceDirectory } from '../../src/execution/sandbox/workspace-root.js';
import { startServer } from '../../src/server.js';
import { harnessEnv, outputTexts, script, waitForState } from '../support/engine.js';
import { GitFixtures } from '../support/git.js';
import { stopChild } from '../support/processes.js';
import { createRun } from '../support/runs.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { HANGAR_FROM_SOURCES } from '../support/typescript.js';
import { startWorker, type WorkerProcess } from '../support/workers.js';

const run = promisify(execFile);
const rootSkip = process.getuid?.() === 0 ? false : 'only a root server has a run user';
const bwrapSkip = resolveSandboxMode(undefined).mode.kind === 'bwrap' ? false : 'bwrap does not work on this machine';

/** A directory as `mktemp -d` makes it (0700, root's), like root's home: the run user cannot pass through it. */
function privateDirectory(): string {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-private-'));
  assert.equal(fs.statSync(directory).mode & 0o777, 0o700);
  return directory;
}

/** `hangar doctor` from the sources with `env`: its exit code and what it printed. */
async function doctor(env: Record<string, string>): Promise<{ code: number; stdout: string }> {
  try {
    const { stdout } = await run(process.execPath, [...HANGAR_FROM_SOURCES, 'doctor'], {
      env: { ...process.env, HANGAR_LOG_LEVEL: 'silent', ...env },
    });
    return { code: 0, stdout };
  } catch (error) {
    const failure = error as { code?: number; stdout?: string };
    return { code: failure.code ?? 1, stdout: failure.stdout ?? '' };
  }
}

// Issue 48: as root, a data directory under a 0700 directory (root's home, any `mktemp -d`) made every run fail
// (bwrap: "Can't find source path ... Permission denied"), and `hangar doctor` said all was well.
describe('a root server whose data directory is under a 0700 directory', { skip: rootSkip, timeout: 180_000 }, () => {
  describe('the example harness', () => {
    let hangar: TestServer;
    before(async () => {
      hangar = await startTestServer({ HANGAR_CONFIG: path.resolve('examples/hangar.yaml') }, { privateParent: true });
    });
    after(() => hangar?.stop());

    test('the first run succeeds, in a workspace root of Hangar’s own that the run user reaches', async () => {
      assert.equal(fs.statSync(path.dirname(hangar.dataDir)).mode & 0o777, 0o700);
      const runId = await createRun(hangar, { prompt: 'hi' });
      const finished = await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR');
      assert.equal(finished.state, 'SUCCEEDED', JSON.stringify(finished.status_message));
      assert.equal(hangar.workspaceDir, path.join(ownWorkspaceDirectory(hangar.dataDir), 'workspaces'));
      // Every level Hangar made is passable, not listable.
      for (const level of [OWN_WORKSPACE_BASE, ownWorkspaceDirectory(hangar.dataDir), hangar.workspaceDir])
        assert.equal(fs.statSync(level).mode & 0o777, 0o711, level);
      assert.match(hangar.server.config.workspacesRelocated?.blocking ?? '', /mode 0700/);
    });
  });

  describe('repositories and setup snapshots', () => {
    const git = new GitFixtures();
    let hangar: TestServer;
    before(async () => {
      git.createRepo('acme', 'app', { 'README.md': '# app\n' });
      hangar = await startTestServer(harnessEnv({}, { HANGAR_GIT_BASE_URL: git.baseUrl, HANGAR_SNAPSHOT_TTL: '1h' }), {
        privateParent: true,
      });
    });
    after(async () => {
      await hangar?.stop();
      git.remove();
    });

    test('a clone and its setup run as the run user, and the second run starts warm from the snapshot', async () => {
      const response = await hangar.request('POST', '/api/v1/environments', {
        body: {
          name: 'private data dir',
          github_repos: [{ owner: 'acme', repo: 'app' }],
          setup_commands: ['echo set-up > app/built.txt'],
        },
      });
      assert.equal(response.status, 201, JSON.stringify(response.body));
      for (let attempt = 0; attempt < 2; attempt++) {
        const runId = await createRun(hangar, {
          prompt: script({ cat: 'app/README.md' }, { cat: 'app/built.txt' }),
          config: { environment_id: response.body.uid },
        });
        const finished = await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR');
        assert.equal(finished.state, 'SUCCEEDED', JSON.stringify(finished.status_message));
        assert.deepEqual(await outputTexts(hangar, runId), ['# app\n', 'set-up\n']);
        const timeline = (await hangar.request('GET', `/agent/runs/${runId}/timeline`)).body.events as Array<{
          event_type: string;
          payload?: { path?: string };
        }>;
        const done = timeline.find((event) => event.event_type === 'environment_setup_done');
        assert.equal(done?.payload?.path, attempt === 0 ? 'cold' : 'warm');
      }
      // The snapshot is beside the workspaces, where the run user can copy it.
      assert.ok(fs.readdirSync(path.join(ownWorkspaceDirectory(hangar.dataDir), 'snapshots')).length > 0);
    });
  });

  describe('with HANGAR_WORKSPACE_DIR set', () => {
    let parent: string;
    before(() => {
      parent = privateDirectory();
    });
    after(() => fs.rmSync(parent, { recursive: true, force: true }));

    test('the server refuses to start, naming the directory in the way, its owner and mode, and the ways out', async () => {
      const config = loadConfig({
        HANGAR_DATA_DIR: path.join(parent, 'data'),
        HANGAR_WORKSPACE_DIR: path.join(parent, 'workspaces'),
        HANGAR_LOG_LEVEL: 'silent',
      });
      await assert.rejects(startServer(config, { logger: false }), (error: Error) => {
        assert.ok(
          error.message.includes(`cannot pass through ${parent} (owner root (uid 0), mode 0700)`),
          error.message,
        );
        assert.match(error.message, /chmod o\+x/);
        assert.match(error.message, /set HANGAR_WORKSPACE_DIR to a directory the run user can reach/);
        return true;
      });
      assert.equal(fs.existsSync(path.join(parent, 'data')), false, 'nothing was made');
    });

    test('`hangar doctor` fails the check and names the directory', async () => {
      const { code, stdout } = await doctor({
        HANGAR_DATA_DIR: path.join(parent, 'data'),
        HANGAR_WORKSPACE_DIR: path.join(parent, 'workspaces'),
        HANGAR_CONFIG: path.resolve('examples/hangar.yaml'),
        HANGAR_GIT_BASE_URL: `file://${parent}`,
      });
      assert.equal(code, 1, stdout);
      const line = stdout.split('\n').find((entry) => entry.includes('run user reaches the workspaces'));
      assert.ok(line?.includes('✗'), stdout);
      assert.ok(line?.includes(`${parent} (owner root (uid 0), mode 0700)`), stdout);
    });
  });

  describe('`hangar doctor` with the default workspaces', () => {
    let parent: string;
    before(() => {
      parent = privateDirectory();
    });
    after(() => {
      fs.rmSync(ownWorkspaceDirectory(path.join(parent, 'data')), { recursive: true, force: true });
      fs.rmSync(parent, { recursive: true, force: true });
    });

    test('checks as the run user, and says where the workspaces go and why', async () => {
      const { code, stdout } = await doctor({
        HANGAR_DATA_DIR: path.join(parent, 'data'),
        HANGAR_CONFIG: path.resolve('examples/hangar.yaml'),
        HANGAR_GIT_BASE_URL: `file://${parent}`,
      });
      const own = path.join(ownWorkspaceDirectory(path.join(parent, 'data')), 'workspaces');
      const line = stdout.split('\n').find((entry) => entry.includes('run user reaches the workspaces'));
      assert.ok(line?.includes(`✓ run user reaches the workspaces: uid 64000 enters ${own}`), stdout);
      assert.ok(line?.includes(`${parent} (owner root (uid 0), mode 0700)`), stdout);
      assert.match(stdout, new RegExp(`workspaces: ${own} \\(Hangar's own`));
      // The sandbox check may fail on a machine without bwrap; the workspaces' must not.
      assert.ok(code === 0 || !/✗ (run user|workspace)/.test(stdout), stdout);
    });
  });

  describe('a harness under a 0700 directory', () => {
    let parent: string;
    before(() => {
      parent = privateDirectory();
      // A checkout under root's home: the example harness is there, out of the run user's reach.
      fs.cpSync(path.resolve('examples'), path.join(parent, 'examples'), { recursive: true });
    });
    after(() => {
      fs.rmSync(ownWorkspaceDirectory(path.join(parent, '.hangar')), { recursive: true, force: true });
      fs.rmSync(parent, { recursive: true, force: true });
    });

    test("the README's first run succeeds from a checkout there (bwrap shows the harness a copy of its file)", {
      skip: bwrapSkip,
    }, async () => {
      const hangar = await startTestServer({
        HANGAR_DATA_DIR: path.join(parent, '.hangar'),
        HANGAR_CONFIG: path.join(parent, 'examples', 'hangar.yaml'),
        HANGAR_SANDBOX: 'bwrap',
      });
      try {
        const runId = await createRun(hangar, { prompt: 'hi' });
        const finished = await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR');
        assert.equal(finished.state, 'SUCCEEDED', JSON.stringify(finished.status_message));
      } finally {
        await hangar.stop();
      }
    });

    test('`hangar doctor` says the run user cannot reach it, and why', { skip: bwrapSkip }, async () => {
      const { stdout } = await doctor({
        HANGAR_DATA_DIR: path.join(parent, '.hangar'),
        HANGAR_CONFIG: path.join(parent, 'examples', 'hangar.yaml'),
        HANGAR_GIT_BASE_URL: `file://${parent}`,
        HANGAR_SANDBOX: 'bwrap',
      });
      const line = stdout.split('\n').find((entry) => entry.includes('run user reaches the harnesses'));
      assert.ok(line?.includes('!'), stdout);
      assert.match(line ?? '', /a copy of the file alone/);
      assert.ok(line?.includes(path.join(parent, 'examples', 'echo-harness.mjs')), stdout);
      assert.ok(line?.includes(`${parent} (owner root (uid 0), mode 0700)`), stdout);
    });
  });

  describe('`hangar worker --data-dir`', () => {
    let hangar: TestServer;
    let worker: WorkerProcess | undefined;
    let parent: string;
    before(async () => {
      parent = privateDirectory();
      hangar = await startTestServer(harnessEnv());
    });
    after(async () => {
      if (worker && worker.child.exitCode === null) await stopChild(worker.child, 'SIGTERM');
      await hangar?.stop();
      fs.rmSync(ownWorkspaceDirectory(path.join(parent, 'data')), { recursive: true, force: true });
      fs.rmSync(parent, { recursive: true, force: true });
    });

    test('a worker whose data directory is under a 0700 directory runs its task', async () => {
      worker = startWorker(hangar, 'private-box', {
        env: harnessEnv(),
        args: ['--data-dir', path.join(parent, 'data')],
      });
      const runId = await createRun(hangar, {
        prompt: script({ say: 'from the worker' }),
        config: { worker_host: 'private-box' },
      });
      const finished = await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR');
      assert.equal(finished.state, 'SUCCEEDED', `${JSON.stringify(finished.status_message)}\n${worker.output()}`);
      assert.deepEqual(await outputTexts(hangar, runId), ['from the worker']);
    });
  });
});
