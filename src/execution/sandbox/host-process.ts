import fs from 'node:fs';
import path from 'node:path';
import { type StartedProcess, spawnProcess } from '../../platform/spawn/index.js';
import type {
  RunUser,
  SandboxBackend,
  SandboxCapabilities,
  SandboxedProcess,
  SandboxKind,
  SandboxOpenResult,
  SandboxSpawnOptions,
} from './backend.js';
import { processTable } from './proc.js';
import { ProcessOutput } from './process-output.js';
import { ProcessTree, type TreeSignal } from './process-tree.js';

const POLL_MS = 25;
/** Once the tree is gone, how long a pipe may stay open (held by a process that left the group with setsid). */
const DRAIN_MS = 1000;

/**
 * The backends whose processes are the server's own children (bwrap/, process/): each process stands alone, so there
 * is no sandbox per execution to open, retire or remove, and snapshots are the workspace's files alone.
 */
export abstract class HostBackend implements SandboxBackend {
  abstract readonly kind: SandboxKind;
  abstract readonly capabilities: SandboxCapabilities;

  constructor(readonly runAs: RunUser | undefined) {}

  abstract spawn(options: SandboxSpawnOptions): SandboxedProcess;

  open(): Promise<SandboxOpenResult> {
    return Promise.resolve({ ok: true, details: {} });
  }

  close(): Promise<void> {
    return Promise.resolve();
  }

  retire(): Promise<void> {
    return Promise.resolve();
  }

  settled(): Promise<void> {
    return Promise.resolve();
  }

  removeUnused(): Promise<number> {
    return Promise.resolve(0);
  }

  imageSnapshots(): undefined {
    return undefined;
  }
}

/** What a host backend starts for one process: its launcher's command line and how the launcher runs. */
export interface HostLaunch {
  argv: string[];
  /** Descriptors beyond 0-2 the launcher reads or writes (bwrap's info and user namespace hold). */
  extraFds: number;
  env: Record<string, string>;
  /** Who the launcher runs as, when not the server's own user. */
  user?: RunUser;
}

/** How a host backend reaches the tree of one started process. */
export interface HostTree {
  /** Signals the tree while its leader lives. */
  signal: TreeSignal;
  /** Once the leader has exited and its group is gone: kills what is left; true while something was. */
  leftovers(): Promise<boolean>;
  /** Nothing of the tree is left: what the backend set up beside it (a network) goes. */
  gone?(): void;
}

/**
 * Starts a host backend's process as the leader of its own process group, so the whole tree can be signalled.
 * `exited` resolves (never rejects) once nothing of the tree is left; a command that cannot be found ends with code
 * 127 and a line on stderr. `launch` builds the confined command line (or says why it cannot start), `attach` learns
 * the started child and says how its tree is signalled and swept.
 */
export function spawnOnHost(
  options: SandboxSpawnOptions,
  launch: (program: string) => HostLaunch | { problem: string; code: number },
  attach: (child: StartedProcess, tree: ProcessTree, output: ProcessOutput) => HostTree,
): SandboxedProcess {
  const command = options.argv[0]!;
  const output = new ProcessOutput(options.maxOutputBytes);
  const { exited } = output;
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
      output.settle({ code, signal: null, timedOut: false, killed: false });
    });

  // Looked up first because bwrap reports a missing command as its own exit 1, not 127.
  const program = findExecutable(command, options.env.PATH, options.cwd);
  if (!program) {
    fail(`command not found: ${command} (PATH=${options.env.PATH ?? ''})`, 127);
    return handle;
  }
  const launched = launch(program);
  if ('problem' in launched) {
    fail(launched.problem, launched.code);
    return handle;
  }
  // The environment goes to the launcher, which passes it on: as arguments it would show in every `ps`. 0-2 and the
  // launcher's own descriptors: nothing else reaches the sandbox.
  const stdio: Array<'pipe'> = Array.from({ length: 3 + launched.extraFds }, () => 'pipe' as const);
  const file = 'bash';
  // Through the spawner (src/platform/spawn): its pid is known once the spawner reports it ('spawn'), so what needs
  // the pid waits for it; a kill asked for meanwhile waits in the tree (ProcessTree's starting state).
  const child = spawnProcess(file, closingInherited(stdio.length - 1, launched.argv), {
    cwd: options.cwd,
    env: launched.env,
    detached: true,
    stdio,
    ...(launched.user ? { uid: launched.user.uid, gid: launched.user.gid } : {}),
  });
  const stdin = child.stdin!;
  const stdout = child.stdout!;
  const stderr = child.stderr!;
  let hostTree: HostTree | undefined;
  const tree = new ProcessTree(output, (name) => hostTree?.signal(name), options.timeoutMs);
  child.on('error', (error: NodeJS.ErrnoException) => {
    // Only a failed start ends up here; we never signal through `child`.
    if (child.pid !== undefined) return;
    tree.gone();
    fail(`cannot start ${file} in ${options.cwd}: ${error.message}`, error.code === 'ENOENT' ? 127 : 126);
  });

  const flushStdout = output.read(stdout, 'stdout');
  const flushStderr = output.read(stderr, 'stderr');
  const closed = new Promise((resolve) => child.once('close', resolve));
  stdin.on('error', () => undefined); // EPIPE once the child has stopped reading
  // Written at once: the spawner hands it on once the process runs, in order.
  if (options.stdinText !== undefined) stdin.write(options.stdinText);
  if (!options.keepStdinOpen) stdin.end();

  let leader = 0;
  const begin = () => {
    leader = child.pid!;
    handle.pid = leader;
    tree.running();
    hostTree = attach(child, tree, output);
  };
  // Node's own spawn (no spawner: the CLI, tests of parts) knows the pid at once; 'spawn' precedes any output or exit.
  if (child.pid !== undefined) begin();
  else child.once('spawn', begin);

  child.once('exit', async (code, signalName) => {
    // Never started ('error' settled it): there is no group, and -0 would be the server's own.
    if (leader === 0) return;
    // The leader is gone, so the run is over: background jobs it left in its group end too, and so does what the
    // backend finds left (leftovers). Each round kills what is still there, until nothing is: a killed process takes
    // a moment to die, and a marked one may have started another between the scan and the kill.
    for (;;) {
      // The group first: its members carry the mark too, so scanning while they die would only find them again.
      if (await alive(-leader)) signal(-leader, 'SIGKILL');
      else if (!(await hostTree!.leftovers())) break;
      await sleep(POLL_MS);
    }
    // No more signals: the ids may now belong to someone else.
    tree.gone();
    hostTree?.gone?.();
    await Promise.race([closed, sleep(DRAIN_MS)]);
    flushStdout();
    flushStderr();
    // Closes the pipes (an escaped process may still hold them), which lets the process close.
    stdout.destroy();
    stderr.destroy();
    stdin.destroy();
    tree.settle({ code, signal: signalName as NodeJS.Signals | null });
  });

  handle.write = (text) => {
    if (child.exitCode !== null || child.signalCode !== null || !stdin.writable) return false;
    stdin.write(text);
    return true;
  };
  handle.kill = (graceMs) => tree.kill(graceMs);
  return handle;
}

/**
 * Closes every descriptor above `highest` and runs its arguments: a descriptor the server inherited without
 * close-on-exec (a launcher's pipe) would otherwise pass through Node's spawn and bwrap into the sandbox.
 *
 * The bash that does it reads no startup file: it runs before the sandbox exists, as the run user, with the run's
 * environment, and its stdin is a socket, for which bash reads ~/.bashrc as if started by sshd. The run's HOME is in
 * its workspace, so a .bashrc a run wrote ran on the host, outside the sandbox, at the next process's start
 * (test/security/sandbox-startup-files.test.ts). --norc and --noprofile skip the files; -p skips $BASH_ENV and the
 * functions a run could export.
 */
const CLOSE_INHERITED =
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell script, where ${f##*/} is the shell's own expansion
  'k=$1; shift; for f in /proc/$$/fd/*; do n=${f##*/}; if [ "$n" -gt "$k" ]; then eval "exec $n>&-"; fi; done; exec "$@"';

export function closingInherited(highest: number, argv: string[]): string[] {
  return ['--norc', '--noprofile', '-p', '-c', CLOSE_INHERITED, 'hangar-sandbox', String(highest), ...argv];
}

export function realPath(file: string): string {
  try {
    return fs.realpathSync(file);
  } catch {
    return path.resolve(file);
  }
}

/** Where `command` would be executed from, as execvp looks it up; undefined when it would not be found. */
export function findExecutable(command: string, searchPath: string | undefined, cwd: string): string | undefined {
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
export async function alive(id: number): Promise<boolean> {
  try {
    process.kill(id, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
  }
  const table = await processTable();
  if (!table) return true;
  return table.some((entry) => entry.running && (id < 0 ? entry.pgrp === -id : entry.pid === id));
}

export async function descendants(root: number): Promise<number[]> {
  const table = (await processTable()) ?? [];
  const found: number[] = [];
  for (let parents = [root]; parents.length > 0; ) {
    const children = table.filter((entry) => parents.includes(entry.ppid)).map((entry) => entry.pid);
    found.push(...children);
    parents = children;
  }
  return found;
}

export function signal(id: number, name: NodeJS.Signals): void {
  try {
    process.kill(id, name);
  } catch {
    // Already gone.
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
