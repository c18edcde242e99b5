import type { RunUser, SandboxCapabilities, SandboxedProcess, SandboxSpawnOptions } from '../backend.js';
import { HostBackend, signal, spawnOnHost } from '../host-process.js';
import { leaderStartTime, markedProcesses, SANDBOX_MARK } from '../marked-processes.js';
import { parentDeathArguments, serverBoundMark } from '../server-death.js';

/**
 * No confinement: a process group in the workspace, for machines without bubblewrap. setpriv sets no_new_privs and,
 * as root, drops to the run user; every process carries the sandbox's mark in its environment, so that those that
 * left the group are still found at the end and when the server dies (server-death.ts).
 */
export class ProcessBackend extends HostBackend {
  readonly kind = 'process';
  readonly capabilities: SandboxCapabilities = {
    perExecution: false,
    isolated: false,
    workspacePath: 'host',
    workspaceFiles: 'host-directory',
    copiesUnreachableFiles: false,
    snapshot: 'files',
    egressProxy: false,
  };

  spawn(options: SandboxSpawnOptions): SandboxedProcess {
    let mark = '';
    return spawnOnHost(
      options,
      () => {
        mark = serverBoundMark();
        return {
          argv: ['setpriv', ...processModePrivileges(this.runAs), ...options.argv],
          extraFds: 0,
          env: { ...options.env, [SANDBOX_MARK]: mark },
        };
      },
      (child, tree) => {
        const leader = child.pid!;
        // Lets the search for escaped processes skip every process older than this sandbox.
        const since = leaderStartTime(leader);
        return {
          signal: async (name) => {
            signal(-leader, name);
            const escaped = await markedProcesses(mark, since);
            if (tree.state !== 'gone') for (const pid of escaped) signal(pid, name);
          },
          // The processes that left the group but carry the sandbox's mark end with it too.
          leftovers: async () => {
            const escaped = await markedProcesses(mark, since);
            for (const pid of escaped) signal(pid, 'SIGKILL');
            return escaped.length > 0;
          },
        };
      },
    );
  }
}

/**
 * setpriv's arguments: no_new_privs always; as root, the run user and no capabilities. The leader dies with the
 * server (setpriv sets the parent-death signal after changing the user, which would clear it); what it started is
 * the watchdog's (server-death.ts).
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
