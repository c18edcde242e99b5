import { spawnSync } from 'node:child_process';
import type { SandboxMode } from './types.js';

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
    ['--die-with-parent', '--new-session', '--unshare-all', '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp', 'true'],
    { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8', timeout: 10_000 },
  );
  if ((probe.error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT') bwrapProblem = 'bwrap (bubblewrap) is not installed (not found on PATH)';
  else if (probe.error) bwrapProblem = `bwrap could not be run: ${probe.error.message}`;
  else if (probe.status !== 0) {
    // Typically unprivileged user namespaces are disabled (sysctl kernel.unprivileged_userns_clone, AppArmor) or a
    // container forbids mounting /proc.
    bwrapProblem = `bwrap is installed but cannot create a sandbox here (exit ${probe.status ?? probe.signal}: ${probe.stderr.trim()})`;
  } else bwrapProblem = null;
  return bwrapProblem;
}

/**
 * The sandbox mode from HANGAR_SANDBOX: `bwrap`, `process`, or unset (auto: bwrap when it works here). A warning
 * comes back whenever runs will not be isolated; an explicit `bwrap` that cannot work is an error, not a downgrade.
 */
export function resolveSandboxMode(requested: string | undefined): { mode: SandboxMode; warning?: string } {
  const value = requested?.trim() ?? '';
  if (value === 'process') return { mode: 'process', warning: `HANGAR_SANDBOX=process: ${NOT_ISOLATED}` };
  if (value === 'bwrap') {
    const problem = probeBwrap();
    if (problem) throw new Error(`HANGAR_SANDBOX=bwrap, but ${problem}. Fix bubblewrap or set HANGAR_SANDBOX=process (runs will not be isolated).`);
    return { mode: 'bwrap' };
  }
  if (value === '' || value === 'auto') {
    const problem = probeBwrap();
    if (!problem) return { mode: 'bwrap' };
    return { mode: 'process', warning: `WARNING: ${problem}. ${NOT_ISOLATED} ${INSTALL_HINT}` };
  }
  throw new Error(`HANGAR_SANDBOX must be "bwrap", "process" or "auto" (the same as unset), not ${JSON.stringify(requested)}`);
}
