import type { Readable, Writable } from 'node:stream';
import type { RunUser, SandboxCapabilities, SandboxedProcess, SandboxSpawnOptions } from '../backend.js';
import { alive, descendants, findExecutable, HostBackend, signal, spawnOnHost } from '../host-process.js';
import { apiRoute, proxyVariables } from '../network.js';
import { blockingDirectory } from '../workspace-root.js';
import { bwrapArguments } from './arguments.js';
import { commandFileBinds } from './command-files.js';
import { operatorCopies } from './operator-copies.js';
import { connectSandbox, type Disconnect, writeIdMaps } from './pasta.js';

export interface BwrapOptions {
  /** The run user when the server is root; undefined runs as the server's user. */
  runAs: RunUser | undefined;
  /** Hangar's API as runs reach it (HANGAR_API_URL): the one host destination a networked run may still reach. */
  apiUrl: () => string | undefined;
  /**
   * Existing paths under /tmp or /run that every sandbox still sees, read-only (HANGAR_SANDBOX_READ_ONLY_PATHS): the
   * sandbox's /tmp and /run are otherwise empty.
   */
  readOnlyPaths: string[];
}

/**
 * bubblewrap: a read-only system without the hidden paths, the workspace the only writable path, a PID namespace of
 * its own (its init takes everything along when killed), and with network a network namespace whose egress goes
 * through pasta (pasta.ts).
 */
export class BwrapBackend extends HostBackend {
  readonly kind = 'bwrap';
  readonly capabilities: SandboxCapabilities = {
    perExecution: false,
    isolated: true,
    workspacePath: 'host',
    workspaceFiles: 'host-directory',
    copiesUnreachableFiles: true,
    snapshot: 'files',
    egressProxy: true,
  };

  constructor(private readonly options: BwrapOptions) {
    super(options.runAs);
  }

  spawn(options: SandboxSpawnOptions): SandboxedProcess {
    const { runAs } = this.options;
    const command = options.argv[0]!;
    const network = options.allowNetwork;
    // Under bwrap the user is dropped here (bwrap then takes every capability away and sets no_new_privs).
    const sandboxUser = runAs && process.getuid?.() === 0 ? runAs : undefined;
    let route: ReturnType<typeof apiRoute> | undefined;
    return spawnOnHost(
      options,
      (program) => {
        const bwrap = findExecutable('bwrap', process.env.PATH, '/');
        if (!bwrap)
          return {
            problem:
              'bwrap (bubblewrap) is not installed; install it (apt-get install bubblewrap) or set HANGAR_SANDBOX=process',
            code: 127,
          };
        const ownCommand = options.operatorFiles?.includes(command) ? program : undefined;
        const visible = [...this.options.readOnlyPaths, ...commandFileBinds(options.operatorFiles ?? [], ownCommand)];
        const operator = [...(options.operatorFiles ?? []), ...(ownCommand ? [program] : [])];
        // bwrap, as the run user, could not bind what that user cannot reach: the operator's files among it are copied.
        const reachable = visible.filter((bind) => !sandboxUser || !blockingDirectory(bind, sandboxUser));
        const argv = [bwrap, ...bwrapArguments(options, reachable, sandboxUser, operatorCopies(operator, sandboxUser))];
        // Started early: the route is resolved while bwrap sets up.
        route = network ? apiRoute(this.options.apiUrl()) : undefined;
        // bwrap's info (3) and, with network, the user namespace hold (4).
        const env =
          network && options.egress ? { ...options.env, ...proxyVariables(options.egress.proxyPort) } : options.env;
        return { argv, extraFds: network ? 2 : 1, env, ...(sandboxUser ? { user: sandboxUser } : {}) };
      },
      (child, tree, output) => {
        const leader = child.pid!;
        // bwrap itself is never signalled: it dies of SIGTERM at once, and if that happens while it is still setting
        // the sandbox up, the sandbox has no parent-death signal yet and lives on (measured with bwrap 0.8). SIGTERM
        // goes to every process below bwrap; SIGKILL to the sandbox's PID 1, which takes its whole PID namespace
        // along at any stage, after which bwrap exits by itself.
        let sandboxInit: number | undefined;
        let killWhenKnown = false;
        // With network, bwrap waits on fd 4 before it lets the sandbox go on; it waits there even after the sandbox
        // has been killed, so whoever kills also closes it (bwrap then finds its child gone and exits).
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
            disconnect = await connectSandbox(pid, owner, await route, options.egress);
            // Ended meanwhile (killed, timed out): its egress goes at once, and nothing is released.
            if (tree.ending) return disconnect();
            hold!.end('1');
          } catch (error) {
            output.stderr(`hangar sandbox: cannot set up the run's network: ${(error as Error).message}`);
            killSandbox();
          }
        };
        // fd 3 receives {"child-pid": N}: the sandbox's PID 1, which is what gets killed.
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
        return {
          // The /proc lookups are awaited; once the tree is gone their pids may belong to someone else.
          signal: async (name) => {
            if (name === 'SIGKILL') return killSandbox();
            const below = await descendants(leader);
            if (tree.state === 'gone') return;
            // PID 1 alone: the command has not started, nothing could end gracefully.
            if (below.length <= 1) return killSandbox();
            for (const pid of below) signal(pid, name);
          },
          // bwrap may exit before its PID 1 has finished killing what is left in the namespace: wait for it.
          leftovers: async () => sandboxInit !== undefined && (await alive(sandboxInit)),
          gone: () => disconnect?.(),
        };
      },
    );
  }
}
