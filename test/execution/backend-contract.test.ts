import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  resolveSandboxMode,
  type SandboxBackend,
  type SandboxSpawnOptions,
  scrubbedEnvironment,
  spawnSandboxed,
} from '../../src/execution/sandbox/index.js';
import { WorkspaceFiles } from '../../src/execution/workspace/files.js';
import { BASE_IMAGE, testEngines } from '../support/container-engines.js';
import { describeProcesses, eventually, processesWith } from '../support/engine.js';
import { stopChild } from '../support/processes.js';

/**
 * The sandbox port's contract (issue 49): the same behaviours against every backend this machine has (process, bwrap,
 * the container sandbox on Podman and on Docker). A backend that cannot meet a row says which and why: a declared
 * skip with its reason, taken from its capabilities where they decide it.
 */

const LIMITS = { memoryBytes: 512 * 1024 * 1024, cpus: 1, pids: 256 };
const { engines, skipReason: noEngine } = testEngines();
const bwrapProblem =
  resolveSandboxMode(undefined).mode.kind === 'bwrap' ? false : 'bwrap does not work on this machine';

interface Subject {
  name: string;
  skip: string | false;
  make: (root: string) => SandboxBackend;
}

const subjects: Subject[] = [
  { name: 'process', skip: false, make: () => resolveSandboxMode('process').mode },
  { name: 'bwrap', skip: bwrapProblem, make: () => resolveSandboxMode('bwrap').mode },
  ...engines.map((engine) => ({
    name: `container (${engine.name})`,
    skip: false as const,
    make: (root: string) =>
      resolveSandboxMode('container', {
        container: () => ({
          dockerHost: engine.dockerHost,
          defaultImage: BASE_IMAGE,
          limits: LIMITS,
          maximums: LIMITS,
          workspaceRoot: root,
          runtimePaths: [],
        }),
      }).mode,
  })),
  ...(engines.length === 0
    ? [{ name: 'container', skip: noEngine, make: () => resolveSandboxMode('process').mode }]
    : []),
];

/** $0 puts the marker on each shell's command line; the loop keeps it a shell (no exec of its last command). */
const loop = (marker: string) => `sh -c 'while :; do sleep 1; done' ${marker}`;

for (const subject of subjects) {
  describe(`the sandbox port: ${subject.name}`, { skip: subject.skip }, () => {
    let root: string;
    let backend: SandboxBackend;
    const markers: string[] = [];
    before(() => {
      root = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-contract-'));
      fs.chmodSync(root, 0o755);
      backend = subject.make(root);
    });
    after(async () => {
      await backend.settled();
      for (const marker of markers) for (const pid of processesWith(marker)) process.kill(pid, 'SIGKILL');
      fs.rmSync(root, { recursive: true, force: true });
    });

    /** An execution's workspace (`<run>.<execution>`), with its sandbox opened where the backend has one. */
    async function workspace(): Promise<string> {
      const directory = path.join(root, `run${randomBytes(6).toString('hex')}.1`);
      // The container sandbox runs as the run user (64000 under a root server): the test's workspace is everyone's.
      fs.mkdirSync(directory, { mode: 0o777 });
      fs.chmodSync(directory, 0o777);
      const opened = await backend.open({
        workspace: directory,
        image: undefined,
        network: false,
        report: async () => {},
      });
      assert.ok(opened.ok, opened.ok ? '' : opened.message);
      return directory;
    }

    function start(cwd: string, argv: string[], options: Partial<SandboxSpawnOptions> = {}) {
      const child = spawnSandboxed({
        mode: backend,
        argv,
        cwd,
        env: scrubbedEnvironment({}, cwd),
        hiddenPaths: [],
        allowNetwork: false,
        timeoutMs: 120_000,
        maxOutputBytes: 1_000_000,
        keepStdinOpen: false,
        ...options,
      });
      const stdout: string[] = [];
      const stderr: string[] = [];
      let onLine: ((line: string) => void) | undefined;
      child.onStdoutLine((line) => {
        stdout.push(line);
        onLine?.(line);
      });
      child.onStderrLine((line) => stderr.push(line));
      const line = (wanted: string) =>
        stdout.includes(wanted)
          ? Promise.resolve()
          : new Promise<void>((resolve) => (onLine = (seen) => seen === wanted && resolve()));
      return { child, stdout, stderr, line };
    }

    const marker = () => {
      const made = `hangar-contract-${randomBytes(6).toString('hex')}`;
      markers.push(made);
      return made;
    };

    test('exit codes and output: each stream line by line, the code as the command left', async () => {
      const directory = await workspace();
      const { child, stdout, stderr } = start(directory, ['sh', '-c', 'echo out; echo err >&2; printf last; exit 3']);
      const exit = await child.exited;
      assert.equal(exit.code, 3);
      assert.equal(exit.signal, null);
      assert.deepEqual(stdout, ['out', 'last']);
      assert.deepEqual(stderr, ['err']);
      const missing = start(directory, ['no-such-command-anywhere']);
      assert.equal((await missing.child.exited).code, 127);
      await backend.close(directory);
    });

    test('limits: output past the cap is dropped while the command runs on; the wall-clock limit ends it', async () => {
      const directory = await workspace();
      const capped = start(directory, ['sh', '-c', 'yes hangar | head -c 200000; echo done >&2'], {
        maxOutputBytes: 1000,
      });
      const exit = await capped.child.exited;
      assert.equal(exit.code, 0);
      assert.equal(exit.outputTruncated, true);
      assert.ok(capped.stdout.length > 0 && capped.stdout.length < 200);
      assert.deepEqual(capped.stderr, ['done'], 'the other stream has a cap of its own');
      const slow = start(directory, ['sh', '-c', 'sleep 600'], { timeoutMs: 300 });
      const timedOut = await slow.child.exited;
      assert.equal(timedOut.timedOut, true);
      assert.equal(timedOut.killed, false);
      assert.notEqual(timedOut.code, 0);
      await backend.close(directory);
    });

    test('a cancel ends the whole tree: background jobs included, before exited resolves', async () => {
      const directory = await workspace();
      const mark = marker();
      const { child, line } = start(directory, ['sh', '-c', `${loop(mark)} & ${loop(mark)} & echo started; wait`]);
      await line('started');
      await eventually('both loops run', () => processesWith(mark).length >= 2);
      const exit = await child.kill(500);
      assert.equal(exit.killed, true);
      const left = processesWith(mark);
      assert.deepEqual(left, [], describeProcesses(left));
      await backend.close(directory);
    });

    test('a process that left the session with setsid ends with its tree', {
      skip: backend0(subject).perExecution
        ? "a container's exec is signalled through its session; one that left it with setsid lives until the execution's container goes (close, or the next sweep)"
        : false,
    }, async () => {
      const directory = await workspace();
      const mark = marker();
      const { child, line } = start(directory, ['sh', '-c', `setsid ${loop(mark)} & echo started; wait`]);
      await line('started');
      await eventually('the escaped loop runs', () => processesWith(mark).length >= 1);
      await child.kill(500);
      const left = processesWith(mark);
      assert.deepEqual(left, [], describeProcesses(left));
    });

    test("the files the server writes and reads never follow the run's links", async () => {
      const directory = await workspace();
      const planted = start(directory, ['sh', '-c', 'ln -s /etc outside && ln -s /etc/hostname secret && mkdir own']);
      assert.equal((await planted.child.exited).code, 0);
      // What the server writes is the workspace owner's: the run user of a root server's containers (64000 here).
      const owner =
        process.getuid?.() === 0 && backend.capabilities.perExecution ? { uid: 64000, gid: 64000 } : undefined;
      await WorkspaceFiles.with(directory, owner, async (files) => {
        await assert.rejects(files.readFile('secret', { maxBytes: 4096 }));
        await assert.rejects(files.writeFile('outside/hangar-contract', 'x'));
        await files.writeFile('own/written', 'by the server');
      });
      assert.equal(fs.existsSync('/etc/hangar-contract'), false);
      const read = start(directory, ['cat', 'own/written']);
      await read.child.exited;
      assert.deepEqual(read.stdout, ['by the server']);
      await backend.close(directory);
    });

    test('no network unless asked', {
      skip: backend0(subject).isolated
        ? false
        : 'process mode does not confine: its runs reach what the server reaches',
    }, async () => {
      const server = net.createServer((socket) => socket.end());
      await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
      try {
        const port = (server.address() as net.AddressInfo).port;
        const host =
          Object.values(os.networkInterfaces())
            .flat()
            .find((entry) => entry && entry.family === 'IPv4' && !entry.internal)?.address ?? '127.0.0.1';
        const directory = await workspace();
        const script = `const s = require('net').connect(${port}, '${host}'); s.on('connect', () => { console.log('connected'); process.exit(0); }); s.on('error', (e) => { console.log('refused ' + e.code); process.exit(0); });`;
        const probe = start(directory, [process.execPath, '-e', script]);
        await probe.child.exited;
        assert.match(probe.stdout.join('\n'), /^refused /, probe.stderr.join('\n'));
        await backend.close(directory);
      } finally {
        server.close();
      }
    });

    test('a snapshot restores what setup left outside the workspace', {
      skip:
        backend0(subject).snapshot === 'files-and-image'
          ? false
          : "this backend's snapshots are the workspace's files alone, which warm/ keeps the same for every backend (test/environments/warm-start.test.ts)",
    }, async () => {
      const images = backend.imageSnapshots();
      assert.ok(images, 'capabilities.snapshot says files-and-image, so the backend has image snapshots');
      const directory = await workspace();
      const setup = start(directory, ['sh', '-c', 'echo kept > /tmp/hangar-contract']);
      assert.equal((await setup.child.exited).code, 0);
      const id = randomBytes(12).toString('hex');
      try {
        await images.commit(directory, id);
        assert.equal(await images.has(id), true);
        await backend.close(directory);
        const reopened = await backend.open({
          workspace: directory,
          image: images.reference(id),
          network: false,
          report: async () => {},
        });
        assert.ok(reopened.ok, reopened.ok ? '' : reopened.message);
        const read = start(directory, ['cat', '/tmp/hangar-contract']);
        await read.child.exited;
        assert.deepEqual(read.stdout, ['kept']);
        await backend.close(directory);
      } finally {
        await images.remove(id);
      }
    });

    test("a server's death ends its sandboxes", async (t) => {
      const directory = await workspace();
      const mark = marker();
      const argv = ['sh', '-c', `${loop(mark)} & ${loop(mark)} & echo started; wait`];
      if (backend.capabilities.perExecution) {
        // A container outlives the server that made it: the next server's start removes what no execution uses.
        const { line, child } = start(directory, argv);
        await line('started');
        const next = subject.make(root);
        assert.ok((await next.removeUnused(new Set())) >= 1);
        await child.exited;
      } else {
        const holder = spawn(
          process.execPath,
          [
            '--import',
            path.resolve('scripts/ts-loader.mjs'),
            'test/execution/fixtures/sandbox-holder.ts',
            directory,
            ...argv,
          ],
          { env: { ...process.env, HANGAR_SANDBOX: backend.kind }, stdio: ['ignore', 'pipe', 'inherit'] },
        );
        t.after(() => stopChild(holder, 'SIGKILL'));
        await new Promise<void>((resolve) =>
          holder.stdout.on('data', (chunk) => chunk.includes('started') && resolve()),
        );
        await eventually('both loops run', () => processesWith(mark).length >= 2);
        await stopChild(holder, 'SIGKILL');
      }
      await eventually('nothing of the sandbox outlives its server', () => processesWith(mark).length === 0);
      await backend.close(directory);
    });

    test('nothing is left: no process, no mount, no sandbox, and the workspace goes', async () => {
      const directory = await workspace();
      const { child } = start(directory, ['sh', '-c', 'echo made > file']);
      assert.equal((await child.exited).code, 0);
      await backend.close(directory);
      await backend.settled();
      assert.deepEqual(processesWith(directory), [], 'no launcher names the workspace any more');
      const mounts = fs.readFileSync('/proc/self/mountinfo', 'utf8');
      assert.equal(mounts.includes(directory), false);
      assert.equal(await backend.removeUnused(new Set()), 0, 'close left no sandbox for the sweep');
      fs.rmSync(directory, { recursive: true });
      assert.equal(fs.existsSync(directory), false);
    });
  });
}

/** A subject's capabilities, known before its tests run (for their declared skips). */
function backend0(subject: Subject): SandboxBackend['capabilities'] {
  if (subject.skip) return { ...resolveSandboxMode('process').mode.capabilities };
  return subject.make(os.tmpdir()).capabilities;
}
