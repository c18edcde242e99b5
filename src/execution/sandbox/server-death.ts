import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { SANDBOX_MARK } from './marked-processes.js';

/**
 * Process-mode sandboxes die with the server. Under bwrap the sandbox's PID namespace ends with the server
 * (--die-with-parent); a plain process group does not, and a harness orphaned by a SIGKILLed server would finish its
 * agent anyway, unseen. Node has no prctl(PR_SET_PDEATHSIG), so:
 * - each sandbox leader is started under `setpriv --pdeathsig SIGKILL` (spawn.ts; util-linux 2.33 and later): it
 *   dies the moment the server does. That covers the leader only (the setting is not inherited across fork);
 * - one watchdog shell per server process catches the rest: it holds the read end of a pipe whose only writer is the
 *   server (close-on-exec, so no sandbox inherits it). When the server is gone, by a crash or an exit, the read sees
 *   end of file and the watchdog kills every process carrying one of this server's sandbox marks, with the process
 *   group each such leader heads, until none is left.
 * A process that both cleared its environment and left the sandbox's process group escapes, as it escapes a cancel.
 *
 * The pasta that gives a networked bwrap sandbox its egress carries a mark too (bwrap/pasta.ts): it outlives its server
 * otherwise.
 */

/** Every sandbox mark of this server process starts with this, so the watchdog knows its own. */
const SERVER_PREFIX = randomUUID();

/**
 * grep -z reads environ entries (NUL-separated) as lines, so the mark matches only as a whole variable. After a
 * search that finds nothing, one more after a moment: a process forked but not yet executed when the server died
 * still carries the server's environment, and gets the mark when it executes.
 */
const WATCHDOG = `
trap '' INT TERM HUP QUIT
while read -r _; do :; done
mark="^$1=$2\\."
empty=0
while [ "$empty" -lt 2 ]; do
  found=$(grep -lsz -- "$mark" /proc/[0-9]*/environ)
  if [ -z "$found" ]; then empty=$((empty + 1)); sleep 0.2; continue; fi
  empty=0
  for file in $found; do
    pid=\${file#/proc/}; pid=\${pid%/environ}
    kill -KILL -- "-$pid" 2>/dev/null; kill -KILL "$pid" 2>/dev/null
  done
done
`;

let watchdog: ChildProcess | undefined;
let pdeathsig: boolean | undefined;

/**
 * setpriv's arguments that make the sandbox's first process die with the server: `--pdeathsig` came with
 * util-linux 2.33; an older setpriv would refuse the option and with it every sandbox, so it is asked once.
 */
export function parentDeathArguments(): string[] {
  if (pdeathsig === undefined) {
    try {
      pdeathsig = execFileSync('setpriv', ['--help'], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      }).includes('--pdeathsig');
    } catch {
      pdeathsig = false;
    }
  }
  return pdeathsig ? ['--pdeathsig', 'SIGKILL'] : [];
}

/** A new mark for one process-mode sandbox; makes sure the watchdog that kills it with the server is running. */
export function serverBoundMark(): string {
  startWatchdog();
  return `${SERVER_PREFIX}.${randomUUID()}`;
}

function startWatchdog(): void {
  if (watchdog && watchdog.exitCode === null && watchdog.signalCode === null) return;
  // No startup file: its stdin is a pipe (a socket), for which bash would read root's ~/.bashrc.
  const child = spawn(
    'bash',
    ['--norc', '--noprofile', '-c', WATCHDOG, 'hangar-sandbox-watchdog', SANDBOX_MARK, SERVER_PREFIX],
    {
      // Its own group: a Ctrl-C to the server's terminal must not end it before the server has ended its sandboxes.
      detached: true,
      stdio: ['pipe', 'ignore', 'ignore'],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    },
  );
  child.on('error', () => {
    // bash missing: process mode cannot run anything either; the next sandbox tries again.
    if (watchdog === child) watchdog = undefined;
  });
  child.stdin?.on('error', () => undefined);
  // Neither the watchdog nor its pipe keeps the server running.
  child.unref();
  (child.stdin as unknown as { unref?: () => void } | null)?.unref?.();
  watchdog = child;
}
