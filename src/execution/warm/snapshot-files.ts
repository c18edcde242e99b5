import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { diskBytes } from '../../platform/git/object-cache.js';
import { removeTree, type FileOwner } from '../workspace-files.js';

const run = promisify(execFile);

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
   * Makes a set-up workspace the snapshot itself, by renaming it (no copy); returns its size on disk. Only for a
   * workspace no process of its execution holds any more (bwrap and process sandboxes between steps; never a
   * container's bind, which would follow the directory) and that is not a mount point; it fails otherwise (and
   * across file systems), and the caller copies instead. Both paths are the server's.
   */
  async adopt(id: string, workspace: string): Promise<number> {
    await this.makeRoot();
    await fs.promises.rename(workspace, this.directory(id));
    return diskBytes(this.directory(id));
  }

  /** Copies a set-up workspace into a new snapshot; returns its size on disk. */
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
    return diskBytes(directory);
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
