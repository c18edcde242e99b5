import fs from 'node:fs';
import path from 'node:path';
import { execFileAsync } from '../../platform/spawn/index.js';
import type { FileOwner } from './files.js';
import { removeTree } from './remove-tree.js';

const run = execFileAsync;

/** Where the writable layers of layered workspaces live, under the workspace root (hidden from every sandbox with it). */
export const LAYERS_DIRECTORY = '.layers';

/**
 * Workspaces started from a setup snapshot without copying it (issue 28): an overlay file system mounted on the
 * host at the workspace's own path, the snapshot as its read-only lower layer and a directory of the execution's own
 * as the upper one. Everything that reads or writes the workspace afterwards (the server's file operations, the oz
 * harness's tools, bwrap's bind, a container's bind, the sweep) sees one ordinary directory, and nothing an
 * execution does reaches the snapshot: overlayfs copies a file up before it is changed, and a deletion is a
 * whiteout in the upper layer.
 *
 * Mounting needs a root server (CAP_SYS_ADMIN in the host's namespace); `available` says so, and without it the
 * caller copies the snapshot instead. Every path handed to the kernel is the server's own: the snapshot directory,
 * and the upper and work directories it makes here.
 *
 * A snapshot must not change while it is a lower layer (overlayfs leaves that undefined): `inUse` names the lowers
 * of the mounts this process holds, and the snapshots' removal leaves those for a later pass.
 */
export class WorkspaceLayers {
  /** The lower directory of each mounted workspace (by its path). */
  private readonly lowers = new Map<string, string>();

  constructor(
    private readonly root: string,
    private readonly owner: FileOwner | undefined,
  ) {}

  /** Whether this server can mount overlays (root on Linux); otherwise snapshots are restored by copying. */
  get available(): boolean {
    return process.platform === 'linux' && process.getuid?.() === 0;
  }

  private layersOf(workspace: string): string {
    return path.join(this.root, LAYERS_DIRECTORY, path.basename(workspace));
  }

  /** Mounts `lower` (a snapshot) under the empty workspace, with a fresh writable layer of its own. */
  async mount(workspace: string, lower: string): Promise<void> {
    const layers = this.layersOf(workspace);
    // The kernel's mount options are separated by commas and its lower layers by colons.
    if ([workspace, lower, layers].some((part) => /[,:\\\n]/.test(part)))
      throw new Error('a path holds a character an overlay mount cannot take');
    await removeTree(layers);
    const upper = path.join(layers, 'upper');
    const work = path.join(layers, 'work');
    await fs.promises.mkdir(layers, { recursive: true, mode: 0o700 });
    await fs.promises.mkdir(upper, { mode: 0o700 });
    await fs.promises.mkdir(work, { mode: 0o700 });
    // The root of the merged directory takes the upper layer's owner and mode: the run's, like any workspace.
    if (this.owner) await fs.promises.chown(upper, this.owner.uid, this.owner.gid);
    // The options name the layers relative to their own directory, and the snapshot through a link there: the
    // kernel shows them as given in every mount table, a sandbox's /proc/self/mountinfo included (issue 47,
    // finding 10), and a snapshot's path is not the run's to know. Removing the layers unlinks the link, never
    // following it.
    await fs.promises.symlink(lower, path.join(layers, 'lower'));
    this.lowers.set(workspace, lower);
    try {
      await run(
        'mount',
        ['-t', 'overlay', 'overlay', '-o', 'lowerdir=lower,upperdir=upper,workdir=work', '--', workspace],
        {
          cwd: layers,
          maxBuffer: 64 * 1024,
        },
      );
    } catch (error) {
      this.lowers.delete(workspace);
      await removeTree(layers).catch(() => undefined);
      throw error;
    }
  }

  /** Whether a mount of this process has `directory` as its lower layer. */
  inUse(directory: string): boolean {
    for (const lower of this.lowers.values()) if (lower === directory) return true;
    return false;
  }

  /**
   * Unmounts a workspace's overlay (when it is one: its device differs from the root's, which also finds the mounts
   * of an engine that died) and removes its writable layer. Lazily: a process that still holds a file in it cannot
   * keep the workspace from going.
   */
  async unmount(workspace: string): Promise<void> {
    const mounted =
      this.lowers.has(workspace) ||
      (await Promise.all([fs.promises.lstat(workspace), fs.promises.stat(this.root)]).then(
        ([inner, outer]) => inner.isDirectory() && inner.dev !== outer.dev,
        () => false,
      ));
    if (mounted) await run('umount', ['--lazy', '--', workspace]).catch(() => undefined);
    this.lowers.delete(workspace);
    await removeTree(this.layersOf(workspace)).catch(() => undefined);
  }

  /** Removes the writable layers whose workspace is gone (its removal was cut short). */
  async removeOrphans(): Promise<void> {
    const directory = path.join(this.root, LAYERS_DIRECTORY);
    const names = await fs.promises.readdir(directory).catch(() => [] as string[]);
    for (const name of names) {
      const exists = await fs.promises.lstat(path.join(this.root, name)).then(
        () => true,
        () => false,
      );
      if (!exists) await removeTree(path.join(directory, name)).catch(() => undefined);
    }
  }
}
