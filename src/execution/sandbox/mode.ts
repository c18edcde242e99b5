import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { RunUser, SandboxBackend, SandboxKind, SandboxMode } from './backend.js';
import { BwrapBackend } from './bwrap/backend.js';
import { ContainerBackend, type ContainerBackendOptions } from './container/backend.js';
import { ProcessBackend } from './process/backend.js';

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
  /** The container sandbox's engine, image, limits and mounts (HANGAR_SANDBOX=container), asked only then. */
  container?: () => Omit<ContainerBackendOptions, 'user'>;
  /** The Kubernetes backend (HANGAR_SANDBOX=kubernetes), built by whoever has its settings, asked only then. */
  kubernetes?: () => SandboxBackend;
  /** HANGAR_SANDBOX_READ_ONLY_PATHS. */
  readOnlyPaths?: string[];
}

/**
 * The sandbox backend from HANGAR_SANDBOX: `bwrap`, `process`, `container`, `kubernetes`, or unset (auto: bwrap when
 * it works here). A warning comes back whenever runs will not be isolated; an explicit `bwrap` that cannot work is an
 * error, not a downgrade. The only place that turns a kind into a backend.
 */
export function resolveSandboxMode(
  requested: string | undefined,
  policy: SandboxPolicy = {},
): { mode: SandboxMode; warning?: string } {
  const value = requested?.trim() ?? '';
  const warnings: string[] = [];
  let kind: Extract<SandboxKind, 'bwrap' | 'process'>;
  if (value === 'container') {
    if (!policy.container) throw new Error('HANGAR_SANDBOX=container needs the container settings');
    // Never root inside: the run user of a root server, else the server's own user (a rootless engine's).
    const user = policy.runAs ?? { uid: process.getuid?.() ?? 64000, gid: process.getgid?.() ?? 64000 };
    const backend = new ContainerBackend({
      ...policy.container(),
      apiUrl: policy.apiUrl,
      user: user.uid === 0 ? { uid: 64000, gid: 64000 } : user,
      ...(policy.runAs ? { runAs: policy.runAs } : {}),
    });
    return { mode: backend };
  }
  // Each execution is a Job whose pod is its sandbox (execution/kubernetes/): this process runs no run code itself.
  if (value === 'kubernetes') {
    if (!policy.kubernetes) throw new Error('HANGAR_SANDBOX=kubernetes needs the Kubernetes settings');
    return { mode: policy.kubernetes() };
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
      `HANGAR_SANDBOX must be "bwrap", "process", "container", "kubernetes" or "auto" (the same as unset), not ${JSON.stringify(requested)}`,
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
  const mode =
    kind === 'bwrap'
      ? new BwrapBackend({
          runAs: policy.runAs,
          apiUrl: policy.apiUrl ?? (() => undefined),
          readOnlyPaths: policy.readOnlyPaths ?? [],
        })
      : new ProcessBackend(policy.runAs);
  return { mode, ...(warnings.length > 0 ? { warning: warnings.join(' ') } : {}) };
}

/** A server's sandbox: what it starts itself, and whether its runs execute in this process at all. */
export interface ServerSandbox {
  mode: SandboxMode;
  warning?: string;
  /**
   * Each execution is a Kubernetes Job whose pod is its sandbox (execution/kubernetes/): the server's engine is the
   * Jobs', and `mode` (the process backend, with no warning: no run code runs here) serves only what the server itself
   * starts.
   */
  runsInJobs: boolean;
}

/** The server's sandbox from HANGAR_SANDBOX (app/services.ts): resolveSandboxMode's, or the Jobs' under Kubernetes. */
export function resolveServerSandbox(requested: string | undefined, policy: SandboxPolicy = {}): ServerSandbox {
  if (requested?.trim() === 'kubernetes') return { mode: resolveSandboxMode('process', policy).mode, runsInJobs: true };
  return { ...resolveSandboxMode(requested, policy), runsInJobs: false };
}

/** The sandbox in the instance's summary and checks (the start log, `hangar doctor`, GET /admin/status). */
export interface SandboxStatus {
  kind: string;
  reason: string;
  ok: boolean;
  detail: string;
  /** Whether a harness file the run user cannot reach is shown to runs as a copy (a warning then, not a failure). */
  copiesUnreachableFiles: boolean;
  /** The Engine API the runs' containers are made through (DOCKER_HOST's form), when they are; for its own check. */
  engine?: string;
}

/** What HANGAR_SANDBOX chose and whether it works here, without building more than the probe it makes anyway. */
export function sandboxStatus(
  requested: string | undefined,
  settings: { runAs?: RunUser; container: { dockerHost: string; defaultImage: string } },
): SandboxStatus {
  // The engine is checked when the server starts (it answers or the server says why); here only what was chosen.
  if (requested === 'container')
    return {
      kind: 'container',
      reason: 'HANGAR_SANDBOX=container',
      ok: true,
      detail: `runs go to containers on ${settings.container.dockerHost} (default image ${settings.container.defaultImage}; networked ones filtered like bwrap's)`,
      copiesUnreachableFiles: false,
      engine: settings.container.dockerHost,
    };
  try {
    const { mode, warning } = resolveSandboxMode(requested, { runAs: settings.runAs });
    const bwrap = mode.kind === 'bwrap';
    const reason = requested
      ? `HANGAR_SANDBOX=${requested}`
      : bwrap
        ? 'HANGAR_SANDBOX unset, and bubblewrap works here'
        : 'HANGAR_SANDBOX unset, and bubblewrap does not work here';
    const runUser = mode.runAs ? `; runs run as uid ${mode.runAs.uid}` : '';
    return {
      kind: mode.kind,
      reason,
      ok: bwrap && !warning,
      detail: warning ?? `bwrap works: runs are isolated${runUser}`,
      copiesUnreachableFiles: mode.capabilities.copiesUnreachableFiles,
    };
  } catch (error) {
    const message = (error as Error).message;
    return {
      kind: 'unusable',
      reason: `HANGAR_SANDBOX=${requested ?? ''}`,
      ok: false,
      detail: message,
      copiesUnreachableFiles: false,
    };
  }
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
