import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileAsync, failureOf } from '../../../platform/spawn/index.js';
import type { RunUser } from '../backend.js';
import { SANDBOX_MARK } from '../marked-processes.js';
import { type ApiRoute, egressRules, proxiedEgressRules, SANDBOX_RESOLVER } from '../network.js';
import { runReadableFile } from '../run-readable-file.js';
import { serverBoundMark } from '../server-death.js';

/**
 * A networked bwrap sandbox gets a network namespace of its own. pasta (passt) gives it a tap interface whose
 * connections pasta makes again from the host as ordinary sockets; nft rules inside the namespace, loaded before the
 * run starts, refuse the host's own and every private destination. The run has no capability in the user namespace
 * that owns the network namespace, so it cannot change either.
 */

/** A resolv.conf naming the forwarded resolver, made once per process and bound over the sandbox's. */
export function sandboxResolvConf(): string {
  return runReadableFile('resolv.conf', `nameserver ${SANDBOX_RESOLVER}\noptions edns0\n`);
}

/** The resolv.conf of a sandbox behind the egress proxy: its resolver is spliced onto the sandbox's loopback. */
export function proxiedResolvConf(): string {
  return runReadableFile('resolv-proxied.conf', 'nameserver 127.0.0.1\noptions edns0\n');
}

/**
 * The user namespace of a sandbox that bwrap holds at --userns-block-fd: uid and gid 0 inside are the run user, as
 * bwrap itself would map them. The launcher writes the maps so that it can enter the namespace as its root and set
 * the network up; root may write them for any user, another user only for itself (which the run user then is).
 */
export function writeIdMaps(pid: number, user: RunUser): void {
  fs.writeFileSync(`/proc/${pid}/uid_map`, `0 ${user.uid} 1\n`);
  fs.writeFileSync(`/proc/${pid}/setgroups`, 'deny\n');
  fs.writeFileSync(`/proc/${pid}/gid_map`, `0 ${user.gid} 1\n`);
}

/** How long one step of the network setup may take before the sandbox is given up. */
const STEP_TIMEOUT_MS = 10_000;

/** Runs one step through the spawner (src/platform/spawn); its failure says how it ended and its stderr's last lines. */
async function run(
  file: string,
  args: string[],
  options: { stdin?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<void> {
  try {
    await execFileAsync(file, args, {
      env: options.env,
      input: options.stdin ?? '',
      timeout: STEP_TIMEOUT_MS,
      killSignal: 'SIGKILL',
    });
  } catch (error) {
    const failure = failureOf(error);
    // Not started (ENOENT...): the spawn's own error.
    if (!failure) throw error;
    throw new Error(`${file} failed (${failure.how}): ${failure.stderrTail}`);
  }
}

/** Ends the pasta of a sandbox. */
export type Disconnect = () => void;

/**
 * Gives the held sandbox `pid`, whose user namespace belongs to `owner`, its egress and rules, and returns what ends
 * that egress once the sandbox is gone: pasta (this version) does not leave by itself when the namespace it serves
 * goes away, so its pid is taken from its pid file. pasta brings the namespace's loopback up with its address; bwrap
 * adds that address itself once released and fails if it is there, so the IPv4 address goes again before the rules.
 *
 * A server that dies (SIGKILL, a crash) cannot call that. pasta runs in the background, in a session of its own,
 * and takes no parent-death signal (measured: one set through `setpriv --pdeathsig` is gone once pasta has dropped
 * its privileges), so it carries a mark of this server instead, and the server's watchdog ends it with the server
 * (server-death.ts). Without it, every networked sandbox of a crashed server left a pasta behind, serving nothing.
 */
export async function connectSandbox(
  pid: number,
  owner: RunUser,
  api: ApiRoute | undefined,
  egress?: { proxyPort: number; dnsPort: number },
): Promise<Disconnect> {
  // pasta opens its pid file after it has become `owner`: a directory of its own, private to it.
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-pasta-'));
  const pidFile = path.join(directory, 'pid');
  let pastaPid: number | undefined;
  const disconnect: Disconnect = () => {
    if (pastaPid !== undefined && isPastaOf(pastaPid, pidFile)) process.kill(pastaPid, 'SIGKILL');
    pastaPid = undefined;
  };
  try {
    if (process.getuid?.() === 0) fs.chownSync(directory, owner.uid, owner.gid);
    const pastaArgs = [
      '--config-net',
      '--quiet',
      '-t',
      'none',
      '-u',
      'none',
      '--no-map-gw',
      '--dns-forward',
      SANDBOX_RESOLVER,
    ];
    // pasta started as root otherwise drops to nobody, who cannot enter a namespace of the run user.
    if (process.getuid?.() === 0) pastaArgs.push('--runas', `${owner.uid}:${owner.gid}`);
    // Behind the egress proxy, its port and its resolver's (as the sandbox's port 53) are spliced in beside the API's.
    const tcp = [...(api?.spliced ? [String(api.port)] : []), ...(egress ? [String(egress.proxyPort)] : [])];
    pastaArgs.push('-P', pidFile, '-T', tcp.length > 0 ? tcp.join(',') : 'none');
    pastaArgs.push('-U', egress ? `53:${egress.dnsPort}` : 'none');
    pastaArgs.push(String(pid));
    try {
      await run('pasta', pastaArgs, { env: { ...process.env, [SANDBOX_MARK]: serverBoundMark() } });
    } finally {
      pastaPid = pidIn(pidFile);
    }
    // nsenter drops supplementary groups when it enters a user namespace, and fails when neither the host nor the
    // namespace (setgroups is `deny` there) lets it: always so for a server that is not root (Hangar's image runs
    // as uid 10001). That server is itself the namespace's uid 0, so it keeps its credentials instead.
    const credentials = process.getuid?.() === 0 ? [] : ['--preserve-credentials'];
    await run(
      'nsenter',
      ['-t', String(pid), '-U', '-n', ...credentials, '--', 'sh', '-c', 'ip -4 addr flush dev lo && exec nft -f -'],
      { stdin: egress ? proxiedEgressRules(api) : egressRules(api) },
    );
    return disconnect;
  } catch (error) {
    disconnect();
    throw error;
  } finally {
    fs.rmSync(directory, { recursive: true, force: true });
  }
}

/** The pid pasta wrote, if it got that far. */
function pidIn(file: string): number | undefined {
  try {
    const pid = Number(fs.readFileSync(file, 'utf8').trim());
    return Number.isInteger(pid) && pid > 1 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Whether `pid` is (still) the pasta started with `pidFile`: once it ended, its pid may go to another process. */
function isPastaOf(pid: number, pidFile: string): boolean {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes(pidFile);
  } catch {
    return false;
  }
}
