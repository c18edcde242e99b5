import fs from 'node:fs';
import path from 'node:path';
import { execFileAsync } from '../../platform/spawn/index.js';
import type { FileOwner } from '../workspace/files.js';
import { removeTree } from '../workspace/remove-tree.js';

const run = execFileAsync;

/**
 * The files of setup snapshots: one directory per snapshot under the server's data directory (hidden from every
 * sandbox), named by the snapshot's id. A warm start mounts one read-only under its workspace (WorkspaceLayers);
 * otherwise, and to take one, copies are made with `cp -a --reflink=auto`: copy-on-write where the file
 * system can (btrfs, XFS), a plain copy elsewhere. Never hard links: a run changes its files in place, and a link
 * would carry that change into the snapshot.
 *
 * The copies run as the run user, as its clones do: what is copied keeps its owner, and `cp -a` follows no link
 * (`-d`): a link setup left in the workspace is copied as a link, never followed.
 */
export class SnapshotFiles {
  constructor(
    readonly root: string,
    private readonly owner: FileOwner | undefined,
    /** Whether a snapshot's directory is a mounted workspace's lower layer: it is then left for a later pass. */
    private readonly busy: (directory: string) => boolean = () => false,
  ) {}

  directory(id: string): string {
    if (!/^[0-9a-f]{24}$/.test(id)) throw new Error('not a snapshot id');
    return path.join(this.root, id);
  }

  private async copy(from: string, to: string): Promise<void> {
    await run('cp', ['-a', '--reflink=auto', '--', `${from}/.`, to], {
      ...(this.owner ? { uid: this.owner.uid, gid: this.owner.gid } : {}),
      maxBuffer: 1024 * 1024,
    });
  }

  async has(id: string): Promise<boolean> {
    return fs.promises.stat(this.directory(id)).then(
      (stat) => stat.isDirectory(),
      () => false,
    );
  }

  private async makeRoot(): Promise<void> {
    await fs.promises.mkdir(this.root, { recursive: true });
    // Traversable, not listable: the run user reaches its snapshot by name only.
    await fs.promises.chmod(this.root, 0o711);
  }

  /**
   * Makes a set-up workspace the snapshot itself, by renaming it (no copy; its size is measured later, with size()).
   * Only for a workspace no process of its execution holds any more (bwrap and process sandboxes between
   * steps; a container's once the container is removed: its bind would follow the directory) and that is not a
   * mount point; it fails otherwise (and across file systems), and the caller copies instead. Both paths are the
   * server's.
   */
  async adopt(id: string, workspace: string): Promise<void> {
    await this.makeRoot();
    await fs.promises.rename(workspace, this.directory(id));
  }

  /** The space a snapshot's files hold of their own (ownBytes). */
  async size(id: string): Promise<number> {
    return ownBytes(this.directory(id));
  }

  /** Copies a set-up workspace into a new snapshot; returns its size on disk (ownBytes). */
  async take(id: string, workspace: string): Promise<number> {
    await this.makeRoot();
    const directory = this.directory(id);
    await fs.promises.mkdir(directory, { mode: 0o700 });
    if (this.owner) await fs.promises.chown(directory, this.owner.uid, this.owner.gid);
    try {
      await this.copy(workspace, directory);
    } catch (error) {
      await this.remove(id);
      throw error;
    }
    return ownBytes(directory);
  }

  /** Copies a snapshot into an empty workspace (where it cannot be mounted under it: see WorkspaceLayers). */
  async restore(id: string, workspace: string): Promise<void> {
    await this.copy(this.directory(id), workspace);
  }

  /**
   * Removes a snapshot's files, unless a workspace is mounted over them: those go at the first maintenance after it
   * is unmounted (no record names them any more).
   */
  async remove(id: string): Promise<void> {
    if (this.busy(this.directory(id))) return;
    await removeTree(this.directory(id)).catch(() => undefined);
  }

  /** The ids of the snapshots on disk. */
  async list(): Promise<string[]> {
    const entries = await fs.promises.readdir(this.root).catch(() => [] as string[]);
    return entries.filter((name) => /^[0-9a-f]{24}$/.test(name));
  }
}

/**
 * The disk space a snapshot holds of its own: its directories, and its files whose every link is in it (each
 * counted once). A file linked from outside too is shared, in practice with the git mirror (the object files of a
 * root server's linked clone, which a snapshot taken by renaming the workspace keeps): it costs the snapshot nothing
 * while the mirror has it, and the mirror's bound counts it. Follows no link.
 */
export async function ownBytes(directory: string): Promise<number> {
  let total = 0;
  /** Files with more than one link: the links seen so far, the link count and the size of each inode. */
  const linked = new Map<number, { seen: number; nlink: number; bytes: number }>();
  const walk = async (current: string): Promise<void> => {
    const entries = await fs.promises.readdir(current);
    await Promise.all(
      entries.map(async (name) => {
        const full = path.join(current, name);
        const stat = await fs.promises.lstat(full);
        if (stat.isDirectory()) {
          total += stat.blocks * 512;
          await walk(full);
        } else if (stat.nlink === 1) {
          total += stat.blocks * 512;
        } else {
          const file = linked.get(stat.ino) ?? { seen: 0, nlink: stat.nlink, bytes: stat.blocks * 512 };
          file.seen++;
          linked.set(stat.ino, file);
        }
      }),
    );
  };
  total += (await fs.promises.lstat(directory)).blocks * 512;
  await walk(directory);
  for (const file of linked.values()) if (file.seen >= file.nlink) total += file.bytes;
  return total;
}
