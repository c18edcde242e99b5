import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { execFileAsync } from '../../platform/spawn/index.js';
import type { FileOwner } from './files.js';
import { removeTree } from './remove-tree.js';

const run = execFileAsync;

/** Where a root server stages its clones, under the workspace root (hidden from every sandbox with it). */
export const CLONES_DIRECTORY = '.clones';

/** Write bits for the group and the others: a linked file with one of them set could be written by the run user. */
const SHARED_WRITE = 0o022;

export interface LinkedCloneOptions {
  /** The workspace root: staging directories are made under it, on the workspaces' file system. */
  root: string;
  /** The run user, distinct from the server's root. */
  owner: FileOwner;
  timeoutMs: number;
  signal: AbortSignal;
}

/**
 * A root server's clone from its mirror, as cheap as a local clone by hand (issue 28): git hard-links the mirror's
 * object files instead of copying its packs. Safe only because the run user can never change a linked file:
 *
 * - root clones, with `--no-checkout`, into a directory of its own (under CLONES_DIRECTORY, mode 0700, never a path
 *   the run controls), on the workspaces' file system. root may link the mirror's files (`fs.protected_hardlinks`
 *   keeps the run user from linking root's files itself). Across file systems git copies instead (`--local` is not
 *   forced), and every file is then the clone's own.
 * - the clone is handed over to the run user (handOver): every directory and every file of its own becomes the run
 *   user's, but a file with more than one link stays root's. Git's object files are read-only (0444) in the mirror,
 *   so the run user can neither write, truncate, chmod nor touch one: the inode is the mirror's, whose every reader
 *   would see a change. It owns the directories, so it may still remove or replace its own names for them (a gc, a
 *   prune), which changes only its checkout. Their mode is never changed here: a chmod would change the mirror's.
 * - the clone is renamed into the workspace, and the caller checks it out as the run user: what the repository
 *   holds (its files, its links) is only ever written by the run user, never by root.
 *
 * Returns the clone's path in the workspace (`<workspace>/<name>`).
 */
export async function cloneLinked(
  mirror: string,
  workspace: string,
  name: string,
  originUrl: string,
  options: LinkedCloneOptions,
): Promise<string> {
  const clones = path.join(options.root, CLONES_DIRECTORY);
  // Named after the workspace, so a sweep can tell a leftover (its workspace gone) from a clone in progress.
  const staging = path.join(clones, `${path.basename(workspace)}.${randomBytes(6).toString('hex')}`);
  for (let attempt = 0; ; attempt++) {
    await fs.promises.mkdir(clones, { recursive: true, mode: 0o700 });
    // Another clone that just ended may have removed the (then empty) directory in between: made again.
    const made = await fs.promises.mkdir(staging, { mode: 0o700 }).then(
      () => true,
      (error: NodeJS.ErrnoException) => {
        if (error.code !== 'ENOENT' || attempt >= 10) throw error;
        return false;
      },
    );
    if (made) break;
  }
  try {
    const staged = path.join(staging, name);
    // The server's own environment, as for its fetches into the mirror: nothing of the run's (its HOME is in the
    // workspace) configures a git that runs as root.
    const git = (args: string[]) =>
      run('git', args, {
        env: { ...process.env, GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C' },
        timeout: options.timeoutMs,
        signal: options.signal,
        maxBuffer: 1024 * 1024,
      });
    await git(['clone', '--no-checkout', '--quiet', '--', mirror, staged]);
    // Its origin is the repository's URL, as if cloned from there (set while the clone is still root's alone).
    await git(['-C', staged, 'remote', 'set-url', 'origin', originUrl]);
    await handOver(staged, options.owner);
    const target = path.join(workspace, name);
    // rename never follows a link at `target`: a file or a link there fails it (ENOTDIR), as a clone into it would.
    await fs.promises.rename(staged, target);
    return target;
  } finally {
    await removeTree(staging).catch(() => undefined);
    // Left only while clones are in progress (it fails while another one's is there): the workspace root holds
    // workspaces, and what lists it expects nothing else.
    await fs.promises.rmdir(clones).catch(() => undefined);
  }
}

/**
 * Makes a clone the run user's, except the files it shares with the mirror (more than one link): those stay as
 * they are, root's and read-only. A shared file the run user could write all the same (its own, or writable by a
 * group or by anyone: not what git makes) is replaced by a copy of its own. `directory` is the server's, in a
 * directory only root can enter, so nothing changes under the walk; it follows no link all the same (lchown, lstat).
 */
export async function handOver(directory: string, owner: FileOwner): Promise<void> {
  await fs.promises.lchown(directory, owner.uid, owner.gid);
  const entries = await fs.promises.readdir(directory, { withFileTypes: true });
  await Promise.all(
    entries.map(async (entry) => {
      const full = path.join(directory, entry.name);
      if (entry.isDirectory()) return handOver(full, owner);
      if (entry.isFile()) {
        const stat = await fs.promises.lstat(full);
        if (stat.nlink > 1) {
          if (stat.uid !== owner.uid && (stat.mode & SHARED_WRITE) === 0) return;
          await unshare(full);
        }
      }
      await fs.promises.lchown(full, owner.uid, owner.gid);
    }),
  );
}

/** Replaces a linked file by a copy of its own (same name, bytes and mode), leaving the other links' inode alone. */
async function unshare(file: string): Promise<void> {
  const copy = `${file}.hangar-copy`;
  await fs.promises.copyFile(file, copy, fs.constants.COPYFILE_EXCL);
  await fs.promises.rename(copy, file);
}

/** Removes the staging directories whose workspace is gone (a server that died mid-clone left them). */
export async function removeOrphanClones(root: string): Promise<void> {
  const clones = path.join(root, CLONES_DIRECTORY);
  for (const name of await fs.promises.readdir(clones).catch(() => [] as string[])) {
    const workspace = name.replace(/\.[0-9a-f]{12}$/, '');
    const exists = await fs.promises.lstat(path.join(root, workspace)).then(
      () => true,
      () => false,
    );
    if (!exists) await removeTree(path.join(clones, name)).catch(() => undefined);
  }
}
