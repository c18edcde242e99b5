import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  LineSplitter,
  resolveSandboxMode,
  resolveServerSandbox,
  type SandboxMode,
  type SandboxSpawnOptions,
  scrubbedEnvironment,
  spawnSandboxed,
} from '../../src/execution/sandbox/index.js';
import { leaderStartTime } from '../../src/execution/sandbox/marked-processes.js';

const NODE = process.execPath;
const bwrapSkip =
  resolveSandboxMode(undefined).mode.kind === 'bwrap'
    ? false
    : 'bwrap does not work on this machine (resolveSandboxMode chose process)';

let root: string;
let workspace: string;
before(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-sandbox-'));
  workspace = path.join(root, 'workspace');
  fs.mkdirSync(workspace);
  // A grandchild that says when it runs and, given "stubborn", ignores SIGTERM.
  fs.writeFileSync(
    path.join(workspace, 'grandchild.cjs'),
    `if (process.argv[3] === 'stubborn') process.on('SIGTERM', () => {});\nconsole.log('up ' + process.pid);\nsetInterval(() => {}, 1000);\n`,
  );
  // Starts a grandchild in a session of its own (setsid, as Gemini CLI does for its commands), out of the process
  // group; passes its "up" line on, then exits, or with "stay" keeps running.
  fs.writeFileSync(
    path.join(workspace, 'escape.cjs'),
    `const child = require('child_process').spawn(process.execPath, ['grandchild.cjs', process.argv[2]], { detached: true, stdio: ['ignore', 'pipe', 'inherit'] });\n` +
      `child.stdout.once('data', (line) => { process.stdout.write(line); if (process.argv[3] !== 'stay') process.exit(0); });\n` +
      `setInterval(() => {}, 1000);\n`,
  );
});
after(() => fs.rmSync(root, { recursive: true, force: true }));

function start(kind: SandboxMode['kind'], argv: string[], options: Partial<SandboxSpawnOptions> = {}) {
  const child = spawnSandboxed({
    mode: resolveSandboxMode(kind).mode,
    argv,
    cwd: workspace,
    env: scrubbedEnvironment({}, workspace),
    hiddenPaths: [],
    allowNetwork: false,
    timeoutMs: 60_000,
    maxOutputBytes: 1_000_000,
    keepStdinOpen: false,
    ...options,
  });
  const stdout: string[] = [];
  const stderr: string[] = [];
  child.onStdoutLine((line) => stdout.push(line));
  child.onStderrLine((line) => stderr.push(line));
  return { child, stdout, stderr };
}

async function run(mode: SandboxMode['kind'], argv: string[], options: Partial<SandboxSpawnOptions> = {}) {
  const { child, stdout, stderr } = start(mode, argv, options);
  return { exit: await child.exited, stdout, stderr };
}

/** Running (not zombie) processes whose command line holds `marker`; they are ours, whatever PID namespace. */
function processesWith(marker: string): number[] {
  return fs
    .readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .flatMap((name) => {
      try {
        const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
        const running = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
        return running && fs.readFileSync(`/proc/${name}/cmdline`, 'utf8').includes(marker) ? [Number(name)] : [];
      } catch {
        return [];
      }
    });
}

/** Gone, or a zombie: this machine's PID 1 does not reap orphans, so kill(pid, 0) alone would still succeed. */
function isGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
  return fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.startsWith('Z') ?? false;
}

/** A shell that starts two grandchildren carrying `marker`, then waits for them. */
function tree(marker: string, stubborn = false): string[] {
  const grandchild = `${NODE} grandchild.cjs ${marker}${stubborn ? ' stubborn' : ''}`;
  return ['sh', '-c', `${grandchild} & ${grandchild} & wait`];
}

/** Resolves once `count` grandchildren have said they run. */
function grandchildrenUp(lines: string[], count: number): Promise<number[]> {
  return new Promise((resolve) => {
    const check = setInterval(() => {
      const up = lines.filter((line) => line.startsWith('up ')).map((line) => Number(line.slice(3)));
      if (up.length >= count) {
        clearInterval(check);
        resolve(up);
      }
    }, 10);
  });
}

describe('LineSplitter', () => {
  test('joins lines across chunks, keeps empty lines, strips CR and returns the unterminated last line on flush', () => {
    const splitter = new LineSplitter();
    assert.deepEqual(splitter.push(Buffer.from('a')), []);
    assert.deepEqual(splitter.push(Buffer.from('b\n\nc\r\nd')), ['ab', '', 'c']);
    assert.deepEqual(splitter.push(Buffer.from('e\n')), ['de']);
    assert.equal(splitter.flush(), undefined);
    splitter.push(Buffer.from('tail'));
    assert.equal(splitter.flush(), 'tail');
    assert.equal(splitter.flush(), undefined);
  });

  test('a multi-byte character split across chunks stays whole', () => {
    const bytes = Buffer.from('héllo €\n');
    const splitter = new LineSplitter();
    const lines = [...bytes].flatMap((byte) => splitter.push(Buffer.from([byte])));
    assert.deepEqual(lines, ['héllo €']);
  });
});

describe('scrubbedEnvironment', () => {
  test('keeps only the allowlist from the server, sets HOME and TMPDIR, and run variables win', () => {
    process.env.HANGAR_TEST_SECRET = 'server-secret';
    process.env.DATABASE_URL = 'postgres://secret';
    try {
      const environment = scrubbedEnvironment({ RUN_VARIABLE: 'yes', TMPDIR: '/tmp/run' }, '/home/run');
      assert.equal(environment.HANGAR_TEST_SECRET, undefined);
      assert.equal(environment.DATABASE_URL, undefined);
      assert.equal(environment.HOME, '/home/run');
      assert.equal(environment.TMPDIR, '/tmp/run');
      assert.equal(environment.RUN_VARIABLE, 'yes');
      assert.ok(environment.PATH);
      const allowed = ['PATH', 'LANG', 'LC_ALL', 'LC_CTYPE', 'TZ', 'TERM', 'HOME', 'TMPDIR', 'RUN_VARIABLE'];
      assert.deepEqual(
        Object.keys(environment).filter((name) => !allowed.includes(name)),
        [],
      );
    } finally {
      delete process.env.HANGAR_TEST_SECRET;
      delete process.env.DATABASE_URL;
    }
  });
});

describe('resolveSandboxMode', () => {
  test('an invalid value throws naming the allowed values', () => {
    assert.throws(() => resolveSandboxMode('docker'), /"bwrap", "process"/);
  });

  test('process is honoured with a warning that runs are not isolated', () => {
    const resolved = resolveSandboxMode('process');
    assert.equal(resolved.mode.kind, 'process');
    assert.match(resolved.warning ?? '', /NOT isolated/);
  });

  test('auto chooses bwrap when it works, otherwise process with a warning how to install it', () => {
    const resolved = resolveSandboxMode(undefined);
    if (resolved.mode.kind === 'bwrap') {
      assert.equal(resolved.warning, undefined);
      assert.equal(resolveSandboxMode('bwrap').mode.kind, 'bwrap');
    } else {
      assert.match(resolved.warning ?? '', /apt-get install bubblewrap/);
      assert.throws(() => resolveSandboxMode('bwrap'), /HANGAR_SANDBOX=bwrap/);
    }
  });
});

describe('resolveServerSandbox', () => {
  test('under Kubernetes runs execute in Jobs, and what the server starts itself gets the process backend, unwarned', () => {
    const resolved = resolveServerSandbox('kubernetes');
    assert.equal(resolved.runsInJobs, true);
    assert.equal(resolved.mode.kind, 'process');
    assert.equal(resolved.warning, undefined);
  });

  test("any other setting is resolveSandboxMode's, its warning included, with runs executing here", () => {
    const resolved = resolveServerSandbox('process');
    assert.equal(resolved.runsInJobs, false);
    assert.equal(resolved.mode.kind, 'process');
    assert.match(resolved.warning ?? '', /NOT isolated/);
    assert.throws(() => resolveServerSandbox('docker'), /"bwrap", "process"/);
  });
});

for (const mode of ['process', 'bwrap'] as const) {
  describe(`spawnSandboxed in ${mode} mode`, { skip: mode === 'bwrap' ? bwrapSkip : false, timeout: 60_000 }, () => {
    test('reports the exit code and every line of both streams, the last one without a newline too', async () => {
      const { exit, stdout, stderr } = await run(mode, ['sh', '-c', 'echo one; echo two >&2; printf "three"; exit 7']);
      assert.deepEqual(exit, { code: 7, signal: null, timedOut: false, killed: false, outputTruncated: false });
      assert.deepEqual(stdout, ['one', 'three']);
      assert.deepEqual(stderr, ['two']);
    });

    test('the task text reaches stdin, which is then closed', async () => {
      const { exit, stdout } = await run(mode, ['cat'], { stdinText: '{"type":"task"}\n' });
      assert.equal(exit.code, 0);
      assert.deepEqual(stdout, ['{"type":"task"}']);
    });

    test('with stdin kept open later writes reach the child, and write answers false once it has ended', async () => {
      const script = `require('readline').createInterface({ input: process.stdin }).on('line', (line) => { console.log('got ' + line); if (line === 'quit') process.exit(0); });`;
      const { child, stdout } = start(mode, [NODE, '-e', script], { stdinText: 'task\n', keepStdinOpen: true });
      await new Promise<void>((resolve) => child.onStdoutLine(() => resolve()));
      assert.equal(child.write('more\n'), true);
      assert.equal(child.write('quit\n'), true);
      const exit = await child.exited;
      assert.equal(exit.code, 0);
      assert.deepEqual(stdout, ['got task', 'got more', 'got quit']);
      assert.equal(child.write('late\n'), false);
    });

    test('the child sees the scrubbed environment and the run variables, not the server secrets', async () => {
      process.env.HANGAR_TEST_SECRET = 'server-secret';
      try {
        const env = scrubbedEnvironment({ RUN_VARIABLE: 'run-value' }, workspace);
        const { exit, stdout } = await run(mode, ['env'], { env });
        assert.equal(exit.code, 0);
        assert.ok(stdout.includes('RUN_VARIABLE=run-value'));
        assert.ok(stdout.includes(`HOME=${workspace}`));
        assert.ok(!stdout.some((line) => line.startsWith('HANGAR_TEST_SECRET=')));
      } finally {
        delete process.env.HANGAR_TEST_SECRET;
      }
    });

    test('kill ends the whole tree, grandchildren included', async () => {
      const marker = `hangar-kill-${randomBytes(6).toString('hex')}`;
      const { child, stdout } = start(mode, tree(marker));
      const pids = await grandchildrenUp(stdout, 2);
      assert.ok(processesWith(marker).length >= 2);
      const exit = await child.kill();
      assert.equal(exit.killed, true);
      assert.equal(exit.timedOut, false);
      assert.deepEqual(processesWith(marker), []);
      // Outside a PID namespace the printed pids are real ones.
      if (mode === 'process') assert.ok(pids.every(isGone));
    });

    test('kill right after the start ends it too, whatever stage it has reached', async () => {
      // bwrap killed while still building the sandbox would leave the sandbox running.
      const marker = `hangar-early-${randomBytes(6).toString('hex')}`;
      for (let attempt = 0; attempt < 20; attempt++) {
        const { child } = start(mode, tree(marker));
        // A pause of its own length, not a wait for anything: each attempt kills at another stage.
        if (attempt % 2 === 1) await new Promise((resolve) => setTimeout(resolve, attempt));
        const exit = await child.kill();
        assert.equal(exit.killed, true);
        assert.deepEqual(processesWith(marker), []);
      }
    });

    test('a tree that ignores SIGTERM is killed once the grace period is over', async () => {
      const marker = `hangar-stubborn-${randomBytes(6).toString('hex')}`;
      const [shell, flag, script] = tree(marker, true);
      const { child, stdout } = start(mode, [shell!, flag!, `trap '' TERM; ${script}`]);
      await grandchildrenUp(stdout, 2);
      const exit = await child.kill(200);
      assert.equal(exit.killed, true);
      // Under bwrap the sandbox's PID 1 is killed, which bwrap reports as 128 + SIGKILL.
      if (mode === 'process') assert.equal(exit.signal, 'SIGKILL');
      else assert.equal(exit.code, 137);
      assert.deepEqual(processesWith(marker), []);
    });

    test('the wall-clock limit ends the tree and sets timedOut', async () => {
      const marker = `hangar-timeout-${randomBytes(6).toString('hex')}`;
      const { exit } = await run(mode, tree(marker), { timeoutMs: 1000 });
      assert.equal(exit.timedOut, true);
      assert.equal(exit.killed, false);
      assert.deepEqual(processesWith(marker), []);
    });

    test('when the process exits, background jobs it left behind end too', async () => {
      const marker = `hangar-left-${randomBytes(6).toString('hex')}`;
      const grandchild = `${NODE} grandchild.cjs ${marker}`;
      const started = `started-${marker}`;
      const script = `${grandchild} > ${started} & while ! [ -s ${started} ]; do sleep 0.05; done; echo leader done`;
      const { exit, stdout } = await run(mode, ['sh', '-c', script]);
      assert.equal(exit.code, 0);
      assert.deepEqual(stdout, ['leader done']);
      assert.deepEqual(processesWith(marker), []);
    });

    test('a grandchild that left the group with setsid ends when the process exits', async () => {
      const marker = `hangar-setsid-exit-${randomBytes(6).toString('hex')}`;
      const { exit, stdout } = await run(mode, [NODE, 'escape.cjs', marker]);
      assert.equal(exit.code, 0);
      assert.equal(stdout.length, 1);
      assert.deepEqual(processesWith(marker), []);
      if (mode === 'process') assert.ok(isGone(Number(stdout[0]!.slice(3))));
    });

    test('kill ends a grandchild that left the group with setsid', async () => {
      const marker = `hangar-setsid-kill-${randomBytes(6).toString('hex')}`;
      const { child, stdout } = start(mode, [NODE, 'escape.cjs', marker, 'stay']);
      const [pid] = await grandchildrenUp(stdout, 1);
      // The process itself and its grandchild (and under bwrap, bwrap, whose command line holds the marker too).
      assert.ok(processesWith(marker).length >= 2);
      const exit = await child.kill();
      assert.equal(exit.killed, true);
      assert.deepEqual(processesWith(marker), []);
      if (mode === 'process') assert.ok(isGone(pid!));
    });

    test('output past the cap is dropped, outputTruncated is set and the child still runs to its end', async () => {
      // 5 MB: far more than a pipe holds, so the child would block if the output stopped being read.
      const script = `const line = 'x'.repeat(99) + '\\n'; for (let i = 0; i < 50000; i++) process.stdout.write(line); process.stdout.write('', () => process.exit(3));`;
      const { exit, stdout } = await run(mode, [NODE, '-e', script], { maxOutputBytes: 10_000 });
      assert.equal(exit.code, 3);
      assert.equal(exit.outputTruncated, true);
      assert.equal(stdout.length, 100);
      assert.ok(stdout.every((line) => line === 'x'.repeat(99)));
    });

    test('a command that does not exist ends with code 127 and says so on stderr', async () => {
      const { exit, stderr } = await run(mode, ['hangar-no-such-command', '--flag']);
      assert.equal(exit.code, 127);
      assert.match(stderr.join('\n'), /hangar-no-such-command/);
    });
  });
}

describe('bwrap isolation', { skip: bwrapSkip, timeout: 60_000 }, () => {
  let outside: string;
  before(() => (outside = fs.mkdtempSync(path.join('/var/tmp', 'hangar-sandbox-outside-'))));
  after(() => fs.rmSync(outside, { recursive: true, force: true }));

  test('the workspace is writable; the rest of the system is read-only and /tmp is private', async () => {
    const script = [
      'echo kept > result.txt && echo workspace-ok',
      `echo no > ${outside}/escaped.txt 2>/dev/null || echo outside-refused`,
      `echo private > /tmp/${path.basename(root)}-private.txt && echo tmp-ok`,
    ].join('; ');
    const { exit, stdout } = await run('bwrap', ['sh', '-c', script]);
    assert.equal(exit.code, 0);
    assert.deepEqual(stdout, ['workspace-ok', 'outside-refused', 'tmp-ok']);
    assert.equal(fs.readFileSync(path.join(workspace, 'result.txt'), 'utf8'), 'kept\n');
    assert.equal(fs.existsSync(path.join(outside, 'escaped.txt')), false);
    assert.equal(fs.existsSync(`/tmp/${path.basename(root)}-private.txt`), false);
  });

  test('hidden paths are invisible even around a workspace inside them; a hidden file reads as nothing', async () => {
    const data = path.join(root, 'data');
    const inner = path.join(data, 'workspaces', 'run-1');
    fs.mkdirSync(inner, { recursive: true });
    fs.writeFileSync(path.join(data, 'secret.key'), 'top-secret-key');
    const database = path.join(outside, 'hangar.db');
    fs.writeFileSync(database, 'top-secret-db');
    const script = `ls -A ${data}; cat ${data}/secret.key ${database} 2>/dev/null; echo inner > file.txt && echo inner-ok`;
    const { exit, stdout } = await run('bwrap', ['sh', '-c', script], { cwd: inner, hiddenPaths: [data, database] });
    assert.equal(exit.code, 0);
    assert.deepEqual(stdout, ['workspaces', 'inner-ok']);
    assert.equal(fs.readFileSync(path.join(inner, 'file.txt'), 'utf8'), 'inner\n');
  });

  test("the host's /run (Unix sockets of databases and Docker) is not visible", async () => {
    const entries = fs.readdirSync('/run');
    const { exit, stdout } = await run('bwrap', ['sh', '-c', 'ls -A /run']);
    assert.equal(exit.code, 0);
    assert.deepEqual(
      stdout.filter((entry) => entries.includes(entry)),
      [],
    );
  });

  test("there is no network unless allowNetwork, and with it still none to the host's loopback", async () => {
    const server = net.createServer((socket) => socket.end());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as net.AddressInfo;
    const script = `require('net').connect(${port}, '127.0.0.1').on('connect', () => { console.log('connected'); process.exit(0); }).on('error', (error) => { console.log(error.code); process.exit(1); });`;
    try {
      const closed = await run('bwrap', [NODE, '-e', script]);
      assert.equal(closed.exit.code, 1);
      assert.notEqual(closed.stdout[0], 'connected');
      const networked = await run('bwrap', [NODE, '-e', script], { allowNetwork: true });
      assert.equal(networked.exit.code, 1, networked.stderr.join('\n'));
      assert.deepEqual(networked.stdout, ['ECONNREFUSED']);
    } finally {
      server.close();
    }
  });

  test('a networked sandbox killed at any stage of its network setup ends', async () => {
    for (const delayMs of [0, 5, 20, 40, 80]) {
      const { child } = start('bwrap', ['sleep', '30'], { allowNetwork: true });
      // Not a wait for anything: each delay kills the sandbox at another stage of its network setup.
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      const exit = await child.kill(100);
      assert.equal(exit.killed, true);
    }
  });
});

describe('process mode: many sandboxes ending at once', { timeout: 60_000 }, () => {
  test('the start-time cut-off is off (0) for a process that is not our child, whose entry could be anyone', () => {
    assert.equal(leaderStartTime(process.ppid), 0);
    assert.equal(leaderStartTime(2 ** 22 + 1), 0);
  });

  test('each ends its own escaped grandchildren and none of a sandbox still running', async () => {
    const prefix = `hangar-setsid-many-${randomBytes(6).toString('hex')}`;
    const staying = start('process', [NODE, 'escape.cjs', `${prefix}-stay`, 'stay']);
    const [stayingPid] = await grandchildrenUp(staying.stdout, 1);
    // Their exits and scans overlap, so one scan answers for several sandboxes.
    const ending = await Promise.all(
      Array.from({ length: 6 }, (_, index) => run('process', [NODE, 'escape.cjs', `${prefix}-${index}`])),
    );
    for (const [index, { exit, stdout }] of ending.entries()) {
      assert.equal(exit.code, 0);
      assert.ok(isGone(Number(stdout[0]!.slice(3))));
      assert.deepEqual(processesWith(`${prefix}-${index}`), []);
    }
    // The staying sandbox's process and its grandchild.
    assert.deepEqual(processesWith(`${prefix}-stay`).sort(), [staying.child.pid, stayingPid].sort());
    await staying.child.kill();
    assert.deepEqual(processesWith(`${prefix}-stay`), []);
  });
});
