import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ContainerBackend, type ContainerBackendOptions } from './container/backend.js';
import type { RunUser, SandboxMode } from './backend.js';

const NOT_ISOLATED =
  'Harness runs are NOT isolated: they can read and write anything this server can, including its data directory, ' +
  'database and secret key, and reach the network.';
const INSTALL_HINT = 'Install bubblewrap (e.g. `apt-get install bubblewrap`) and set HANGAR_SANDBOX=bwrap.';

/** The probe's answer, kept for the life of the process: whether bwrap works here does not change. */
let bwrapProblem: string | null | undefined;

/** Null when bwrap can build a sandbox like the ones runs get; otherwise why not. */
function probeBwrap(): string | null {
  if (bwrapProblem !== undefined) return bwrapProblem;
  const probe = spawnSync(
    'bwrap',
    [
      '--die-with-parent',
      '--new-session',
      '--unshare-all',
      '--ro-bind',
      '/',
      '/',
      '--dev',
      '/dev',
      '--proc',
      '/proc',
      '--tmpfs',
      '/tmp',
      'true',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8', timeout: 10_000 },
  );
  if ((probe.error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT')
    bwrapProblem = 'bwrap (bubblewrap) is not installed (not found on PATH)';
  else if (probe.error) bwrapProblem = `bwrap could not be run: ${probe.error.message}`;
  else if (probe.status !== 0) {
    // Typically unprivileged user namespaces are disabled (sysctl kernel.unprivileged_userns_clone, AppArmor) or a
    // container forbids mounting /proc.
    bwrapProblem = `bwrap is installed but cannot create a sandbox here (exit ${probe.status ?? probe.signal}: ${probe.stderr.trim()})`;
  } else bwrapProblem = null;
  return bwrapProblem;
}

/** Programs every sandbox needs on the host, and those a networked bwrap sandbox needs besides. */
const NEEDED = { bwrap: ['bash'], process: ['bash', 'setpriv'], network: ['pasta', 'nsenter', 'nft', 'ip'] };

function missing(programs: string[]): string[] {
  const directories = (process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin').split(':').concat('/usr/sbin', '/sbin');
  return programs.filter(
    (program) =>
      !directories.some((directory) => {
        try {
          fs.accessSync(path.join(directory, program), fs.constants.X_OK);
          return true;
        } catch {
          return false;
        }
      }),
  );
}

export interface SandboxPolicy {
  /** The run user when the server is root (config `runUser`); undefined runs as the server's user. */
  runAs?: RunUser;
  /** Hangar's API as runs reach it; a networked run may still reach it. */
  apiUrl?: () => string | undefined;
  /** The container sandbox's engine, image, limits and mounts (HANGAR_SANDBOX=container). */
  container?: Omit<ContainerBackendOptions, 'user'>;
  /** HANGAR_SANDBOX_READ_ONLY_PATHS. */
  readOnlyPaths?: string[];
}

/**
 * The sandbox mode from HANGAR_SANDBOX: `bwrap`, `process`, or unset (auto: bwrap when it works here). A warning
 * comes back whenever runs will not be isolated; an explicit `bwrap` that cannot work is an error, not a downgrade.
 */
export function resolveSandboxMode(
  requested: string | undefined,
  policy: SandboxPolicy = {},
): { mode: SandboxMode; warning?: string } {
  const value = requested?.trim() ?? '';
  const mode = (kind: SandboxMode['kind']): SandboxMode => ({
    kind,
    runAs: policy.runAs,
    apiUrl: policy.apiUrl ?? (() => undefined),
    readOnlyPaths: policy.readOnlyPaths ?? [],
  });
  const warnings: string[] = [];
  let kind: SandboxMode['kind'];
  if (value === 'container') {
    if (!policy.container) throw new Error('HANGAR_SANDBOX=container needs the container settings');
    // Never root inside: the run user of a root server, else the server's own user (a rootless engine's).
    const user = policy.runAs ?? { uid: process.getuid?.() ?? 64000, gid: process.getgid?.() ?? 64000 };
    const executions = new ContainerBackend({
      ...policy.container,
      apiUrl: policy.apiUrl,
      user: user.uid === 0 ? { uid: 64000, gid: 64000 } : user,
    });
    return { mode: { ...mode('container'), executions } };
  }
  if (value === 'process') {
    kind = 'process';
    warnings.push(`HANGAR_SANDBOX=process: ${NOT_ISOLATED}`);
  } else if (value === 'bwrap') {
    const problem = probeBwrap();
    if (problem)
      throw new Error(
        `HANGAR_SANDBOX=bwrap, but ${problem}. Fix bubblewrap or set HANGAR_SANDBOX=process (runs will not be isolated).`,
      );
    kind = 'bwrap';
  } else if (value === '' || value === 'auto') {
    const problem = probeBwrap();
    kind = problem ? 'process' : 'bwrap';
    if (problem) warnings.push(`WARNING: ${problem}. ${NOT_ISOLATED} ${INSTALL_HINT}`);
  } else {
    throw new Error(
      `HANGAR_SANDBOX must be "bwrap", "process", "container" or "auto" (the same as unset), not ${JSON.stringify(requested)}`,
    );
  }
  const absent = missing(NEEDED[kind]);
  if (absent.length > 0) throw new Error(`The ${kind} sandbox needs ${absent.join(', ')} on PATH`);
  const absentForNetwork = kind === 'bwrap' ? missing(NEEDED.network) : [];
  if (absentForNetwork.length > 0) {
    warnings.push(
      `WARNING: ${absentForNetwork.join(', ')} not found: runs and setup commands with network will fail (apt-get install passt nftables iproute2 util-linux).`,
    );
  }
  const tunProblem = kind === 'bwrap' && absentForNetwork.length === 0 ? tunDeviceProblem() : undefined;
  if (tunProblem) warnings.push(`WARNING: ${tunProblem}: runs and setup commands with network will fail.`);
  return { mode: mode(kind), ...(warnings.length > 0 ? { warning: warnings.join(' ') } : {}) };
}

/**
 * pasta opens /dev/net/tun as the run user (a root server hands it over) or as the server's own user, never as root:
 * the device must be open to everyone, as it is by default on most systems. Some container hosts create it 0600.
 */
function tunDeviceProblem(): string | undefined {
  let mode: number;
  try {
    mode = fs.statSync('/dev/net/tun').mode;
  } catch {
    return '/dev/net/tun does not exist (a networked sandbox gets its egress through it)';
  }
  if ((mode & 0o006) === 0o006) return undefined;
  return `/dev/net/tun is mode ${(mode & 0o777).toString(8)}, so pasta (running as the run user) cannot open it; make it 0666 (chmod 0666 /dev/net/tun)`;
}
