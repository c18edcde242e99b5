import fs from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { at, code, openAt, readAt, translate } from './handles.js';
import { components, normalized, WorkspacePathError } from './paths.js';
import { type WalkEntry, walkDirectory } from './walk.js';

// The module every caller uses: its refusals, path text and tree removal come with it.
export { normalized, type RefusalReason, WorkspacePathError, workspaceRelative } from './paths.js';
export { removeTree } from './remove-tree.js';
export type { WalkEntry } from './walk.js';

/**
 * Every file operation the server performs inside a workspace goes through here. A workspace is run-controlled:
 * its code may plant symbolic links, hard links and FIFOs, and swap directories for links while the server works
 * (renameat2 RENAME_EXCHANGE in a loop). So nothing is ever opened by a path string that a check looked at before:
 * the workspace root is opened once as a directory handle, and each component is opened relative to the handle of
 * its parent, through `/proc/self/fd/<fd>/<name>` with O_NOFOLLOW (the kernel resolves the magic link to the very
 * directory the handle holds, then looks up one name in it, without following it). What is opened is then checked
 * with fstat, on the handle that is read or written.
 *
 * Symbolic links: the server's own files (HOME, CLI configs and sessions, attachments) never go through one, a link
 * there is refused. Paths a run names (artifacts, oz's file tools) may go through links, which are resolved here,
 * beneath the workspace root, as openat2's RESOLVE_BENEATH would: an absolute target or a `..` above the root is
 * refused, and at most MAX_LINK_HOPS links are followed.
 *
 * Refusal messages speak of the requested path only: they never depend on what exists outside the workspace,
 * which is never looked at.
 */

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_DIRECTORY, O_NONBLOCK } = fs.constants;

/** The user the run's processes run as: what the server creates in a workspace is theirs. */
export interface FileOwner {
  uid: number;
  gid: number;
}

const MAX_LINK_HOPS = 40;

export interface ReadOptions {
  /** Resolve links beneath the workspace root (else a link is refused). */
  follow?: boolean;
  maxBytes: number;
  /** Return the first maxBytes of a larger file instead of refusing it. */
  truncate?: boolean;
}

interface Resolved {
  /** The directory holding the final name (the root when the path is the root itself). */
  parent: FileHandle;
  /** null: the path is the workspace root. */
  name: string | null;
  release(): Promise<void>;
}

/** A workspace opened as a directory handle. `close()` when done; `WorkspaceFiles.with` does it for you. */
export class WorkspaceFiles {
  private constructor(
    private readonly root: FileHandle,
    private readonly owner: FileOwner | undefined,
  ) {}

  /** Opens the workspace directory itself (the server made it; its path is not run-controlled, its content is). */
  static async open(directory: string, owner?: FileOwner): Promise<WorkspaceFiles> {
    const root = await fs.promises.open(directory, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
    return new WorkspaceFiles(root, owner);
  }

  static async with<T>(
    directory: string,
    owner: FileOwner | undefined,
    use: (files: WorkspaceFiles) => Promise<T>,
  ): Promise<T> {
    const files = await WorkspaceFiles.open(directory, owner);
    try {
      return await use(files);
    } finally {
      await files.close();
    }
  }

  close(): Promise<void> {
    return this.root.close();
  }

  /** A regular file's bytes. Refused: a missing path, anything but a regular file, a link (unless followed), a file over maxBytes. */
  async readFile(relative: string, options: ReadOptions): Promise<Buffer> {
    const resolved = await this.resolve(relative, { follow: options.follow ?? false, create: false });
    try {
      if (resolved.name === null) throw new WorkspacePathError(relative, 'not-file');
      return await readAt(resolved.parent, resolved.name, options.maxBytes, options.truncate ?? false, relative);
    } finally {
      await resolved.release();
    }
  }

  /** What is at the path (after links, when followed), or null when nothing is. */
  async stat(relative: string, options: { follow?: boolean } = {}): Promise<fs.Stats | null> {
    let resolved: Resolved;
    try {
      resolved = await this.resolve(relative, { follow: options.follow ?? false, create: false });
    } catch (error) {
      if (error instanceof WorkspacePathError && error.reason === 'missing') return null;
      throw error;
    }
    try {
      if (resolved.name === null) return await resolved.parent.stat();
      const handle = await openAt(resolved.parent, resolved.name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK, relative);
      if (!handle) return null;
      try {
        return await handle.stat();
      } finally {
        await handle.close();
      }
    } finally {
      await resolved.release();
    }
  }

  /**
   * Creates or replaces a regular file (mode 0600, the owner's), making missing parent directories (0700). An
   * existing file is truncated only when it is a regular file with one link: a hard link could be another file's.
   */
  async writeFile(relative: string, data: Buffer | string, options: { follow?: boolean } = {}): Promise<void> {
    const resolved = await this.resolve(relative, { follow: options.follow ?? false, create: true });
    try {
      if (resolved.name === null) throw new WorkspacePathError(relative, 'not-file');
      const target = at(resolved.parent, resolved.name);
      let handle: FileHandle;
      try {
        handle = await fs.promises.open(target, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600);
        if (this.owner) await handle.chown(this.owner.uid, this.owner.gid);
      } catch (error) {
        if (code(error) !== 'EEXIST') throw translate(error, relative);
        const existing = await openAt(resolved.parent, resolved.name, O_WRONLY | O_NOFOLLOW | O_NONBLOCK, relative);
        if (!existing) throw new WorkspacePathError(relative, 'missing');
        handle = existing;
        const stat = await handle.stat();
        if (!stat.isFile() || stat.nlink !== 1) {
          await handle.close();
          throw new WorkspacePathError(relative, 'not-file', 'not a regular file with a single link');
        }
        await handle.truncate(0);
      }
      try {
        await handle.writeFile(data);
      } finally {
        await handle.close();
      }
    } finally {
      await resolved.release();
    }
  }

  /** Makes the directory (and its missing parents), owned by the run's user. Refuses a link on the way. */
  async mkdirs(relative: string): Promise<void> {
    // Resolving a child of it creates every directory on the way, the last one included.
    const resolved = await this.resolve(`${relative}/.`, { follow: false, create: true, createLast: true });
    await resolved.release();
  }

  /** The names in a directory (links are not followed: a link is listed, as what it is). */
  async list(relative: string, options: { follow?: boolean } = {}): Promise<fs.Dirent[]> {
    return this.inDirectory(relative, options.follow ?? false, (handle) =>
      fs.promises.readdir(at(handle), { withFileTypes: true }),
    );
  }

  /**
   * Everything under a directory, depth first in name order, directories before their content. Links are neither
   * listed nor followed below the starting directory; `skip` names directories left out.
   */
  async *walk(relative: string, options: { follow?: boolean; skip?: Set<string> } = {}): AsyncGenerator<WalkEntry> {
    const start = await this.resolve(`${relative}/.`, { follow: options.follow ?? false, create: false });
    try {
      yield* walkDirectory(start.parent, normalized(relative), options.skip ?? new Set());
    } finally {
      await start.release();
    }
  }

  private async inDirectory<T>(relative: string, follow: boolean, use: (handle: FileHandle) => Promise<T>): Promise<T> {
    const resolved = await this.resolve(`${relative}/.`, { follow, create: false, createLast: false });
    try {
      return await use(resolved.parent);
    } finally {
      await resolved.release();
    }
  }

  /**
   * Walks `relative` one component at a time from the root handle. Directories on the way are opened with
   * O_DIRECTORY|O_NOFOLLOW relative to their parent's handle; a link there is refused, or (follow) its target is
   * walked in its place from the link's directory, never above the root. With follow, a final link is resolved too
   * (the caller's O_NOFOLLOW open then refuses anything swapped in meanwhile).
   */
  private async resolve(
    relative: string,
    options: { follow: boolean; create: boolean; createLast?: boolean },
  ): Promise<Resolved> {
    const pending = components(relative);
    // A trailing `/.` asks for the directory itself: every component is then a directory to open (or create).
    const wholeIsDirectory = relative.endsWith('/.') || pending.length === 0;
    const held: FileHandle[] = [];
    const release = async () => {
      for (const handle of held.splice(0).reverse()) await handle.close();
    };
    let hops = 0;
    // Tries at making the current component (a run removing it each time would otherwise keep this going).
    let attempts = 0;
    const current = () => held.at(-1) ?? this.root;
    const follow = async (name: string) => {
      if (++hops > MAX_LINK_HOPS) throw new WorkspacePathError(relative, 'link', 'too many symbolic links');
      let target: string;
      try {
        target = await fs.promises.readlink(at(current(), name));
      } catch (error) {
        // No longer a link (swapped back meanwhile): the name is looked at again, a few times at most.
        if (code(error) !== 'EINVAL') throw translate(error, relative);
        if (++attempts <= 3) return pending.unshift(name);
        throw new WorkspacePathError(relative, 'changed');
      }
      if (path.isAbsolute(target)) throw new WorkspacePathError(relative, 'outside');
      pending.unshift(...components(target));
    };
    try {
      while (pending.length > 0) {
        const name = pending.shift()!;
        if (name === '..') {
          const up = held.pop();
          if (!up) throw new WorkspacePathError(relative, 'outside');
          await up.close();
          continue;
        }
        if (pending.length === 0 && !wholeIsDirectory) {
          if (options.follow) {
            const stat = await fs.promises.lstat(at(current(), name)).catch(() => null);
            if (stat?.isSymbolicLink()) {
              await follow(name);
              continue;
            }
          }
          return { parent: current(), name, release };
        }
        try {
          held.push(await fs.promises.open(at(current(), name), O_RDONLY | O_DIRECTORY | O_NOFOLLOW));
          attempts = 0;
          continue;
        } catch (error) {
          const failure = code(error);
          if (failure === 'ENOENT' && options.create && (pending.length > 0 || options.createLast) && ++attempts <= 3) {
            await this.makeDirectory(current(), name);
            pending.unshift(name);
            continue;
          }
          if (failure === 'ENOENT') throw new WorkspacePathError(relative, 'missing');
          if (failure !== 'ENOTDIR' && failure !== 'ELOOP') throw translate(error, relative);
        }
        const stat = await fs.promises.lstat(at(current(), name)).catch(() => null);
        if (stat?.isDirectory() && ++attempts <= 3) {
          // A link when opened, a directory now: swapped meanwhile; open it again (by handle, as ever).
          pending.unshift(name);
          continue;
        }
        if (stat?.isDirectory()) throw new WorkspacePathError(relative, 'changed');
        if (!stat?.isSymbolicLink())
          throw new WorkspacePathError(relative, 'not-directory', `${name} is not a directory`);
        if (!options.follow)
          throw new WorkspacePathError(
            relative,
            'link',
            `${name} is a symbolic link, which the server does not follow here`,
          );
        await follow(name);
      }
      return { parent: current(), name: null, release };
    } catch (error) {
      await release();
      throw error;
    }
  }

  private async makeDirectory(parent: FileHandle, name: string): Promise<void> {
    const target = at(parent, name);
    try {
      await fs.promises.mkdir(target, { mode: 0o700 });
    } catch (error) {
      if (code(error) === 'EEXIST') return;
      throw error;
    }
    if (!this.owner) return;
    // Through a handle of what was made: a swap after mkdir makes the open fail, it never chowns something else.
    const made = await fs.promises.open(target, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
    try {
      await made.chown(this.owner.uid, this.owner.gid);
    } finally {
      await made.close();
    }
  }
}
