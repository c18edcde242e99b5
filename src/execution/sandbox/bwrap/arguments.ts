import fs from 'node:fs';
import type { RunUser, SandboxSpawnOptions } from '../backend.js';
import { closingInherited, realPath } from '../host-process.js';
import type { OperatorCopy } from './operator-copies.js';
import { proxiedResolvConf, sandboxResolvConf } from './pasta.js';
import { boundWithout, sandboxRoot } from './root.js';

/**
 * The bwrap command line: the whole system read-only but the hidden paths (left out, with whatever is mounted below
 * them: sandboxRoot), empty /tmp and /run, then the workspace bound writable. The bind comes last because the
 * workspace usually lies inside a hidden path (the data directory) or /tmp; bwrap creates its mount point on the
 * sandbox's own root, which is then made read-only. With network, bwrap holds the sandbox at fd 4 until the launcher
 * has set its network namespace up (`connectSandbox`), and the resolver is the forwarded one.
 */
export function bwrapArguments(
  options: Pick<SandboxSpawnOptions, 'argv' | 'cwd' | 'hiddenPaths' | 'allowNetwork' | 'egress'>,
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
  if (options.allowNetwork)
    args.push('--ro-bind', options.egress ? proxiedResolvConf() : sandboxResolvConf(), realPath('/etc/resolv.conf'));
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
