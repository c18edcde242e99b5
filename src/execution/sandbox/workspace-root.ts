import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../../config.js';
import type { RunUser } from './backend.js';

/**
 * Hangar's own place for workspaces on a root server whose run user cannot reach the configured ones (issue 48):
 * every level Hangar makes is 0711, and each data directory gets a directory of its own below (a hash of its path),
 * so two servers on one machine never share a workspace root.
 */
export const OWN_WORKSPACE_BASE = '/var/lib/hangar';

/** A directory on the way to the workspaces that the run user cannot pass through. */
export interface BlockingDirectory {
  path: string;
  uid: number;
  gid: number;
  mode: number;
}

/** Refused at start: HANGAR_WORKSPACE_DIR was set, and the run user cannot reach it. */
export class WorkspaceRootUnreachable extends Error {}

/** Whether `user` may pass through a directory of this owner and mode (the x bit its class has), as the kernel judges. */
function canPass(stat: fs.Stats, user: RunUser): boolean {
  if (stat.uid === user.uid) return (stat.mode & 0o100) !== 0;
  if (stat.gid === user.gid) return (stat.mode & 0o010) !== 0;
  return (stat.mode & 0o001) !== 0;
}

/**
 * The first directory on the way to `directory` that `user` cannot pass through, or undefined. Links are followed
 * first (the directories that count are the real ones), and the part that does not exist yet is Hangar's to make,
 * 0711. Read from the modes alone: an ACL granting more is not seen (Hangar then finds a directory too strict).
 */
export function blockingDirectory(
  directory: string,
  user: RunUser,
  /** Directories Hangar makes passable itself before any run (allowRunUserToWorkspaces): never in the way. */
  madePassable: string[] = [],
): BlockingDirectory | undefined {
  const own = new Set(madePassable.map((made) => realOrResolved(made)));
  let existing = path.resolve(directory);
  while (!fs.existsSync(existing) && path.dirname(existing) !== existing) existing = path.dirname(existing);
  let real: string;
  try {
    real = fs.realpathSync(existing);
  } catch {
    return undefined;
  }
  const chain: string[] = [];
  for (let current = real; ; current = path.dirname(current)) {
    chain.unshift(current);
    if (path.dirname(current) === current) break;
  }
  for (const step of chain) {
    const stat = fs.statSync(step, { throwIfNoEntry: false });
    if (!stat?.isDirectory()) return undefined;
    if (!canPass(stat, user) && !own.has(step))
      return { path: step, uid: stat.uid, gid: stat.gid, mode: stat.mode & 0o7777 };
  }
  return undefined;
}

function realOrResolved(directory: string): string {
  try {
    return fs.realpathSync(directory);
  } catch {
    return path.resolve(directory);
  }
}

/** A user's name from /etc/passwd, for messages; the number when there is none. */
function userName(uid: number): string {
  try {
    const line = fs
      .readFileSync('/etc/passwd', 'utf8')
      .split('\n')
      .find((entry) => entry.split(':')[2] === String(uid));
    if (line) return `${line.split(':')[0]} (uid ${uid})`;
  } catch {
    // No passwd file: the number says it.
  }
  return `uid ${uid}`;
}

/** "/root (owner root (uid 0), mode 0700)". */
export function describeBlocking(blocking: BlockingDirectory): string {
  return `${blocking.path} (owner ${userName(blocking.uid)}, mode ${blocking.mode.toString(8).padStart(4, '0')})`;
}

/** Hangar's own directory for a data directory's workspaces and snapshots, under OWN_WORKSPACE_BASE. */
export function ownWorkspaceDirectory(dataDir: string, base = OWN_WORKSPACE_BASE): string {
  return path.join(base, createHash('sha256').update(path.resolve(dataDir)).digest('hex').slice(0, 16));
}

/**
 * The configuration with workspaces the run user can reach (issue 48): as root, a data directory under a 0700
 * directory (root's home, any `mktemp -d`) made every run fail, since bwrap, git and the run's shell reach the
 * workspace by path as the run user. When the configured workspace root is out of its reach, Hangar's own under
 * OWN_WORKSPACE_BASE takes its place (`workspacesRelocated` says why), and so do the setup snapshots, which the run
 * user copies; an explicit HANGAR_WORKSPACE_DIR is refused instead, with the way out. Nothing changes for a server
 * that is not root (its runs run as itself).
 */
export function placeWorkspaces(config: Config, base = OWN_WORKSPACE_BASE): Config {
  const user = config.runUser;
  if (!user || process.getuid?.() !== 0) return config;
  const madePassable = [config.dataDir, config.workspaceDir, config.snapshotDir];
  const blocking = blockingDirectory(config.workspaceDir, user, madePassable);
  if (blocking && config.workspaceDirExplicit) {
    throw new WorkspaceRootUnreachable(
      `the run user (uid ${user.uid}, HANGAR_RUN_USER) cannot reach HANGAR_WORKSPACE_DIR=${config.workspaceDir}: ` +
        `it cannot pass through ${describeBlocking(blocking)}. Either make that directory passable ` +
        `(chmod o+x ${blocking.path}), or set HANGAR_WORKSPACE_DIR to a directory the run user can reach ` +
        `(unset, Hangar uses its own under ${OWN_WORKSPACE_BASE})`,
    );
  }
  const snapshotsBlocked = blockingDirectory(config.snapshotDir, user, madePassable);
  if (!blocking && !snapshotsBlocked) return config;
  const own = ownWorkspaceDirectory(config.dataDir, base);
  const ownBlocking = blockingDirectory(own, user, [own]);
  if (ownBlocking)
    throw new WorkspaceRootUnreachable(
      `the run user (uid ${user.uid}) cannot reach ${blocking ? config.workspaceDir : config.snapshotDir} ` +
        `(${describeBlocking((blocking ?? snapshotsBlocked)!)}) nor Hangar's own ${own} (${describeBlocking(ownBlocking)}): ` +
        'make one of them passable (chmod o+x), or set HANGAR_WORKSPACE_DIR to a directory the run user can reach',
    );
  return {
    ...config,
    ...(blocking ? { workspaceDir: path.join(own, 'workspaces') } : {}),
    snapshotDir: path.join(own, 'snapshots'),
    workspacesRelocated: {
      from: blocking ? config.workspaceDir : config.snapshotDir,
      blocking: describeBlocking((blocking ?? snapshotsBlocked)!),
    },
  };
}
