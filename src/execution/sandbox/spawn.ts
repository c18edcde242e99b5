import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { boundWithout, sandboxRoot } from './bwrap/root.js';
import { commandFileBinds } from './bwrap/command-files.js';
import { type OperatorCopy, operatorCopies } from './bwrap/operator-copies.js';
import { blockingDirectory } from './workspace-root.js';
import { leaderStartTime, markedProcesses, SANDBOX_MARK } from './marked-processes.js';
import { connectSandbox, type Disconnect, sandboxResolvConf, writeIdMaps } from './bwrap/pasta.js';
import { apiRoute } from './network.js';
import { processTable } from './proc.js';
import { ProcessOutput } from './process-output.js';
import { parentDeathArguments, serverBoundMark } from './server-death.js';
import type { RunUser, SandboxSpawnOptions, SandboxedProcess } from './backend.js';

const DEFAULT_GRACE_MS = 2000;
const POLL_MS = 25;
/** Once the tree is gone, how long a pipe may stay open (held by a process that left the group with setsid). */
const DRAIN_MS = 1000;
/** setTimeout fires at once for longer delays. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The bwrap command line: the whole system read-only but the hidden paths (left out, with whatever is mounted below
 * them: sandboxRoot), empty /tmp and /run, then the workspace bound writable. The bind comes last because the
 * workspace usually lies inside a hidden path (the data directory) or /tmp; bwrap creates its mount point on the
 * sandbox's own root, which is then made read-only. With network, bwrap holds the sandbox at fd 4 until the launcher
 * has set its network namespace up (`connectSandbox`), and the resolver is the forwarded one.
 */
export function bwrapArguments(
  options: Pick<SandboxSpawnOptions, 'argv' | 'cwd' | 'hiddenPaths' | 'allowNetwork'>,
  /** Paths under /tmp or /run the command must still see, read-only (commandFileBinds, HANGAR_SANDBOX_READ_ONLY_PATHS). */
  visible: string[] = [],
  /** The user bwrap runs as, when not the server's own (the run user of a root server). */
  runAs?: RunUser,
  /** Operator files out of that user's reach, shown as copies at their own paths (operatorCopies). */
  copies: OperatorCopy[] = [],
): string[] {
  // fd 3 receives {"child-pid": N}: the sandbox's PID 1, which is what gets killed (see spawnSandboxed).
  // No capability inside either, even for a sandbox started by root without a run user (bwrap keeps them for uid 0).
  const args = ['--die-with-parent', '--new-session', '--unshare-all', '--cap-drop', 'ALL', '--info-fd', '3'];
  if (options.allowNetwork) args.push('--unshare-user', '--userns-block-fd', '4');
  // /run holds Unix sockets (PostgreSQL, Docker, D-Bus): they stay connectable through a read-only bind and a
  // separate network namespace does not cover them.
  const hidden = options.hiddenPaths.map(realPath).flatMap((file) => {
    const stat = fs.statSync(file, { throwIfNoEntry: false });
    return stat ? [{ file, directory: stat.isDirectory() }] : [];
  });
  const hiddenDirectories = hidden.filter((entry) => entry.directory).map((entry) => entry.file);
  // The directories in the way of an operator's copied file are left empty, so that its path can be made in them.
  args.push(...sandboxRoot([...hiddenDirectories, ...copies.map((entry) => entry.blocking)], runAs));
  args.push('--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp', '--tmpfs', '/run');
  // What must stay visible under those (a checkout in /tmp), read-only, without the hidden paths in it.
  for (const bind of visible) args.push(...boundWithout(realPath(bind), hiddenDirectories, runAs));
  // Hidden directories under /tmp and /run exist, empty, as the others do.
  for (const directory of hiddenDirectories) args.push('--dir', directory);
  // A file is covered by /dev/null, which reads as nothing.
  for (const entry of hidden) if (!entry.directory) args.push('--ro-bind', '/dev/null', entry.file);
  for (const { copy, file } of copies) args.push('--ro-bind', copy, file);
  if (options.allowNetwork) args.push('--ro-bind', sandboxResolvConf(), realPath('/etc/resolv.conf'));
  const cwd = realPath(options.cwd);
  // bwrap leaves the user namespace hold (fd 4) open in the sandbox: the command starts behind the same closer.
  args.push(
    '--bind',
    cwd,
    cwd,
    // The sandbox's own root (where the hidden directories and the workspace's mount point were made) as read-only
    // as the host's system under it.
    '--remount-ro',
    '/',
    '--chdir',
    cwd,
    '--',
    ...(options.allowNetwork ? ['bash', ...closingInherited(2, options.argv)] : options.argv),
  );
  return args;
}

/**
 * Closes every descriptor above `highest` and runs its arguments: a descriptor the server inherited without
 * close-on-exec (a launcher's pipe) would otherwise pass through Node's spawn and bwrap into the sandbox.
 */
const CLOSE_INHERITED =
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell script, where ${f##*/} is the shell's own expansion
  'k=$1; shift; for f in /proc/$$/fd/*; do n=${f##*/}; if [ "$n" -gt "$k" ]; then eval "exec $n>&-"; fi; done; exec "$@"';

function closingInherited(highest: number, argv: string[]): string[] {
  return ['-c', CLOSE_INHERITED, 'hangar-sandbox', String(highest), ...argv];
}

/**
 * setpriv's arguments for `process` mode: no_new_privs always; as root, the run user and no capabilities. The leader
 * dies with the server (setpriv sets the parent-death signal after changing the user, which would clear it); what it
 * started is the watchdog's (server-death.ts).
 */
function processModePrivileges(runAs: RunUser | undefined): string[] {
  const args = ['--no-new-privs', ...parentDeathArguments()];
  if (runAs && process.getuid?.() === 0) {
    args.push(
      '--reuid',
      String(runAs.uid),
      '--regid',
      String(runAs.gid),
      '--clear-groups',
      '--inh-caps=-all',
      '--bounding-set=-all',
    );
  }
  return [...args, '--'];
}

function realPath(file: string): string {
  try {
    return fs.realpathSync(file);
  } catch {
    return path.resolve(file);
  }
}

/** Where `command` would be executed from, as execvp looks it up; undefined when it would not be found. */
function findExecutable(command: string, searchPath: string | undefined, cwd: string): string | undefined {
  const candidates = command.includes('/')
    ? [path.resolve(cwd, command)]
    : (searchPath ?? '').split(':').map((directory) => path.resolve(cwd, directory, command));
  return candidates.find((candidate) => {
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      return fs.statSync(candidate).isFile();
    } catch {
      return false;
    }
  });
}

/**
 * Whether a process (or, for a negative id, a process group) still runs. kill(0) alone is not enough: it also finds
 * zombies, and where PID 1 does not reap orphans (containers without an init) killed grandchildren stay zombies.
 */
async function alive(id: number): Promise<boolean> {
  try {
    process.kill(id, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
  }
  const table = await processTable();
  if (!table) return true;
  return table.some((entry) => entry.running && (id < 0 ? entry.pgrp === -id : entry.pid === id));
}

async function descendants(root: number): Promise<number[]> {
  const table = (await processTable()) ?? [];
  const found: number[] = [];
  for (let parents = [root]; parents.length > 0; ) {
    const children = table.filter((entry) => parents.includes(entry.ppid)).map((entry) => entry.pid);
    found.push(...children);
    parents = children;
  }
  return found;
}

function signal(id: number, name: NodeJS.Signals): void {
  try {
    process.kill(id, name);
  } catch {
    // Already gone.
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Starts a harness process confined as `options.mode` says, as the leader of its own process group so the whole
 * tree can be signalled. `exited` resolves (never rejects) once nothing of the tree is left; a command that
 * cannot be found ends with code 127 and a line on stderr.
 */
export function spawnSandboxed(options: SandboxSpawnOptions): SandboxedProcess {
  const [command] = options.argv;
  if (command === undefined) throw new Error('spawnSandboxed: argv is empty');
  // The container sandbox runs every process in its execution's container (container/backend.ts).
  if (options.mode.executions) return options.mode.executions.spawn(options);
  const output = new ProcessOutput(options.maxOutputBytes);
  const { exited } = output;
  let terminating = false;
  let treeGone = false;
  let timedOut = false;
  let killed = false;
  const timers: NodeJS.Timeout[] = [];

  const finish = (code: number | null, signalName: NodeJS.Signals | null) => {
    if (output.done) return;
    timers.forEach(clearTimeout);
    output.settle({ code, signal: signalName, timedOut, killed });
  };
  const handle: SandboxedProcess = {
    pid: 0,
    onStdoutLine: output.onStdoutLine,
    onStderrLine: output.onStderrLine,
    write: () => false,
    exited,
    kill: () => exited,
  };
  // Later, so that the caller's listeners (set after this returns) hear why.
  const fail = (message: string, code: number) =>
    setImmediate(() => {
      output.stderr(`hangar sandbox: ${message}`);
      finish(code, null);
    });

  // Looked up first because bwrap reports a missing command as its own exit 1, not 127.
  const program = findExecutable(command, options.env.PATH, options.cwd);
  if (!program) {
    fail(`command not found: ${command} (PATH=${options.env.PATH ?? ''})`, 127);
    return handle;
  }
  const { kind, runAs } = options.mode;
  const network = kind === 'bwrap' && options.allowNetwork;
  let argv = options.argv;
  if (kind === 'bwrap') {
    const bwrap = findExecutable('bwrap', process.env.PATH, '/');
    if (!bwrap) {
      fail(
        'bwrap (bubblewrap) is not installed; install it (apt-get install bubblewrap) or set HANGAR_SANDBOX=process',
        127,
      );
      return handle;
    }
    const visible = [
      ...(options.mode.readOnlyPaths ?? []),
      ...commandFileBinds(options.operatorFiles ?? [], options.operatorFiles?.includes(command) ? program : undefined),
    ];
    const sandboxUser = runAs && process.getuid?.() === 0 ? runAs : undefined;
    const operator = [...(options.operatorFiles ?? []), ...(options.operatorFiles?.includes(command) ? [program] : [])];
    // bwrap, as the run user, could not bind what that user cannot reach: the operator's files among it are copied.
    const reachable = visible.filter((bind) => !sandboxUser || !blockingDirectory(bind, sandboxUser));
    argv = [bwrap, ...bwrapArguments(options, reachable, sandboxUser, operatorCopies(operator, sandboxUser))];
  } else argv = ['setpriv', ...processModePrivileges(runAs), ...argv];
  // Started early: the route is resolved while bwrap sets up.
  const route = network ? apiRoute(options.mode.apiUrl()) : undefined;

  // The environment goes to bwrap, which passes it on: as --setenv arguments it would show in every `ps`.
  // 0-2, then bwrap's info (3) and, with network, the user namespace hold (4): nothing else reaches the sandbox.
  const stdio: Array<'pipe'> =
    kind === 'bwrap'
      ? ['pipe', 'pipe', 'pipe', 'pipe', ...(network ? (['pipe'] as const) : [])]
      : ['pipe', 'pipe', 'pipe'];
  const mark = kind === 'process' ? serverBoundMark() : '';
  const env = kind === 'process' ? { ...options.env, [SANDBOX_MARK]: mark } : options.env;
  // Under bwrap the user is dropped here (bwrap then takes every capability away and sets no_new_privs); in process
  // mode setpriv drops it, since it also has to set no_new_privs.
  const user = kind === 'bwrap' && runAs && process.getuid?.() === 0 ? runAs : undefined;
  const file = 'bash';
  const child = spawn(file, closingInherited(stdio.length - 1, argv), {
    cwd: options.cwd,
    env,
    detached: true,
    stdio,
    ...(user ? { uid: user.uid, gid: user.gid } : {}),
  });
  child.on('error', (error: NodeJS.ErrnoException) => {
    // Only a failed start ends up here; we never signal through `child`.
    if (child.pid === undefined)
      fail(`cannot start ${file} in ${options.cwd}: ${error.message}`, error.code === 'ENOENT' ? 127 : 126);
  });
  if (child.pid === undefined) return handle;
  const leader = child.pid;
  handle.pid = leader;
  // Lets the search for escaped processes skip every process older than this sandbox.
  const since = kind === 'process' ? leaderStartTime(leader) : 0;

  const flushStdout = output.read(child.stdout, 'stdout');
  const flushStderr = output.read(child.stderr, 'stderr');
  const closed = new Promise((resolve) => child.once('close', resolve));
  child.stdin.on('error', () => undefined); // EPIPE once the child has stopped reading
  if (options.stdinText !== undefined) child.stdin.write(options.stdinText);
  if (!options.keepStdinOpen) child.stdin.end();

  // Under bwrap, bwrap itself is never signalled: it dies of SIGTERM at once, and if that happens while it is still
  // setting the sandbox up, the sandbox has no parent-death signal yet and lives on (measured with bwrap 0.8).
  // SIGTERM goes to every process below bwrap; SIGKILL to the sandbox's PID 1, which takes its whole PID namespace
  // along at any stage, after which bwrap exits by itself.
  let sandboxInit: number | undefined;
  let killWhenKnown = false;
  // With network, bwrap waits on fd 4 before it lets the sandbox go on; it waits there even after the sandbox has
  // been killed, so whoever kills also closes it (bwrap then finds its child gone and exits).
  const hold = network ? (child.stdio[4] as Writable) : undefined;
  hold?.on('error', () => undefined);
  let disconnect: Disconnect | undefined;
  const killSandbox = () => {
    // Only while bwrap lives is its child's pid certain to be still its child's.
    if (sandboxInit !== undefined && child.exitCode === null && child.signalCode === null)
      signal(sandboxInit, 'SIGKILL');
    else killWhenKnown = true;
    if (sandboxInit !== undefined) hold?.destroy();
  };
  /** The sandbox is held until its network namespace has its egress and rules; a failure ends it. */
  const connect = async (pid: number) => {
    try {
      const owner = runAs ?? { uid: process.getuid!(), gid: process.getgid!() };
      writeIdMaps(pid, owner);
      disconnect = await connectSandbox(pid, owner, await route);
      // Ended meanwhile (killed, timed out): its egress goes at once, and nothing is released.
      if (terminating || treeGone) return disconnect();
      hold!.end('1');
    } catch (error) {
      output.stderr(`hangar sandbox: cannot set up the run's network: ${(error as Error).message}`);
      killSandbox();
    }
  };
  if (kind === 'bwrap') {
    let info = '';
    (child.stdio[3] as Readable).on('data', (chunk: Buffer) => {
      info += chunk.toString();
      const match = /"child-pid"\s*:\s*(\d+)/.exec(info);
      if (match && sandboxInit === undefined) {
        sandboxInit = Number(match[1]);
        if (killWhenKnown) killSandbox();
        else if (network) void connect(sandboxInit);
      }
    });
  }
  // The /proc lookups are awaited; once the tree is gone their pids may belong to someone else and get no signal.
  const signalTree = async (name: NodeJS.Signals) => {
    if (kind === 'process') {
      signal(-leader, name);
      const escaped = await markedProcesses(mark, since);
      if (!treeGone) for (const pid of escaped) signal(pid, name);
      return;
    }
    if (name === 'SIGKILL') return killSandbox();
    const below = await descendants(leader);
    if (treeGone) return;
    // PID 1 alone: the command has not started, nothing could end gracefully.
    if (below.length <= 1) return killSandbox();
    for (const pid of below) signal(pid, name);
  };
  const terminate = (graceMs: number) => {
    if (terminating || treeGone) return;
    terminating = true;
    void signalTree('SIGTERM');
    timers.push(setTimeout(() => void signalTree('SIGKILL'), graceMs));
  };
  if (Number.isFinite(options.timeoutMs)) {
    timers.push(
      setTimeout(
        () => {
          timedOut = true;
          terminate(DEFAULT_GRACE_MS);
        },
        Math.min(Math.max(options.timeoutMs, 0), MAX_TIMER_MS),
      ),
    );
  }

  child.once('exit', async (code, signalName) => {
    // The leader is gone, so the run is over: background jobs it left in its group end too, as they do under bwrap
    // when the PID namespace's init exits, and so do the processes that left the group but carry the sandbox's mark.
    // Each round kills what is still there, until nothing is: a killed process takes a moment to die, and a marked
    // one may have started another between the scan and the kill.
    for (;;) {
      // The group first: its members carry the mark too, so scanning while they die would only find them again.
      if (await alive(-leader)) signal(-leader, 'SIGKILL');
      // bwrap may exit before its PID 1 has finished killing what is left in the namespace: wait for it.
      else if (sandboxInit === undefined || !(await alive(sandboxInit))) {
        const escaped = kind === 'process' ? await markedProcesses(mark, since) : [];
        if (escaped.length === 0) break;
        for (const pid of escaped) signal(pid, 'SIGKILL');
      }
      await sleep(POLL_MS);
    }
    // No more signals: the ids may now belong to someone else.
    treeGone = true;
    disconnect?.();
    timers.forEach(clearTimeout);
    await Promise.race([closed, sleep(DRAIN_MS)]);
    flushStdout();
    flushStderr();
    child.stdout.destroy();
    child.stderr.destroy();
    child.stdin.destroy();
    finish(code, signalName);
  });

  handle.write = (text) => {
    if (child.exitCode !== null || child.signalCode !== null || !child.stdin.writable) return false;
    child.stdin.write(text);
    return true;
  };
  handle.kill = (graceMs = DEFAULT_GRACE_MS) => {
    if (!treeGone && !terminating) killed = true;
    terminate(graceMs);
    return exited;
  };
  return handle;
}
