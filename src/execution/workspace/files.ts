import fs from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';

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

export type RefusalReason =
  | 'missing'
  | 'outside'
  | 'link'
  | 'not-file'
  | 'not-directory'
  | 'too-large'
  | 'denied'
  | 'invalid'
  | 'changed';

/** A path the server will not use; the message is safe to show to the run (it names only the requested path). */
export class WorkspacePathError extends Error {
  override name = 'WorkspacePathError';
  constructor(
    readonly path: string,
    readonly reason: RefusalReason,
    /** The message without the path. */
    readonly detail: string = REASONS[reason],
  ) {
    super(`${path}: ${detail}`);
  }
}

const REASONS: Record<RefusalReason, string> = {
  missing: 'no such file or directory in the workspace',
  outside: 'the path leads outside the workspace',
  link: 'a symbolic link, which the server does not follow here',
  'not-file': 'not a regular file',
  'not-directory': 'not a directory',
  'too-large': 'the file is too large',
  denied: 'permission denied',
  invalid: 'not a valid path',
  changed: 'it kept changing while the server looked at it',
};

const MAX_LINK_HOPS = 40;
/** Directories held open at once while removing a tree; deeper ones are moved up to the top first. */
const REMOVE_DEPTH = 32;
/** Passes over the top of a tree being removed (each one removes what is there, or moves deep parts up). */
const REMOVE_PASSES = 10_000;

/** The name `name` inside the directory `handle` holds, as a path the kernel resolves relative to that handle. */
function at(handle: FileHandle, name = ''): string {
  return name === '' ? `/proc/self/fd/${handle.fd}` : `/proc/self/fd/${handle.fd}/${name}`;
}

function code(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

/**
 * A path a run named, relative to its workspace: relative paths as they are, absolute ones only when they name
 * something under the workspace's own path (compared as text: nothing outside the workspace is looked at).
 */
export function workspaceRelative(workspace: string, requested: string): string {
  if (!path.isAbsolute(requested)) return requested;
  const relative = path.relative(path.resolve(workspace), path.resolve(requested));
  if (relative === '') return '.';
  if (relative.startsWith('..') || path.isAbsolute(relative)) throw new WorkspacePathError(requested, 'outside');
  return relative;
}

/** A relative path in its shortest form, '' for the root. */
export function normalized(relative: string): string {
  const clean = path.posix.normalize(relative);
  return clean === '.' || clean === './' ? '' : clean.replace(/^\.\//, '').replace(/\/$/, '');
}

function components(relative: string): string[] {
  if (relative.includes('\0')) throw new WorkspacePathError(relative, 'invalid');
  return relative.split('/').filter((part) => part !== '' && part !== '.');
}

export interface ReadOptions {
  /** Resolve links beneath the workspace root (else a link is refused). */
  follow?: boolean;
  maxBytes: number;
  /** Return the first maxBytes of a larger file instead of refusing it. */
  truncate?: boolean;
}

export interface WalkEntry {
  /** Relative to the workspace root, `/`-separated. */
  path: string;
  directory: boolean;
  /** A file's bytes (at most maxBytes, else null), through the handle of its directory; null when unreadable. */
  read(maxBytes: number): Promise<Buffer | null>;
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

function translate(error: unknown, relative: string): Error {
  switch (code(error)) {
    case 'ENOENT':
      return new WorkspacePathError(relative, 'missing');
    case 'ELOOP':
      return new WorkspacePathError(relative, 'link');
    case 'EISDIR':
    case 'ENOTDIR':
    case 'ENXIO':
      return new WorkspacePathError(relative, 'not-file');
    case 'EACCES':
    case 'EPERM':
      return new WorkspacePathError(relative, 'denied');
    default:
      return error as Error;
  }
}

/** Opens `name` in `parent` without following it; null when it is gone. */
async function openAt(parent: FileHandle, name: string, flags: number, relative: string): Promise<FileHandle | null> {
  try {
    return await fs.promises.open(at(parent, name), flags);
  } catch (error) {
    if (code(error) === 'ENOENT') return null;
    throw translate(error, relative);
  }
}

/**
 * A regular file's bytes through the handle it was opened with, or why not. O_NONBLOCK: opening a FIFO must not
 * hang the server (and fstat then refuses it).
 */
async function readAt(
  parent: FileHandle,
  name: string,
  maxBytes: number,
  truncate: boolean,
  relative: string,
): Promise<Buffer> {
  let handle: FileHandle;
  try {
    handle = await fs.promises.open(at(parent, name), O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  } catch (error) {
    throw translate(error, relative);
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw new WorkspacePathError(relative, 'not-file');
    if (stat.size > maxBytes && !truncate)
      throw new WorkspacePathError(
        relative,
        'too-large',
        `the file has ${stat.size} bytes, more than the ${maxBytes} allowed`,
      );
    const buffer = Buffer.alloc(Math.min(stat.size, maxBytes));
    let filled = 0;
    while (filled < buffer.length) {
      const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    return buffer.subarray(0, filled);
  } finally {
    await handle.close();
  }
}

async function* walkDirectory(directory: FileHandle, prefix: string, skip: Set<string>): AsyncGenerator<WalkEntry> {
  let entries: fs.Dirent[];
  try {
    entries = await fs.promises.readdir(at(directory), { withFileTypes: true });
  } catch {
    return;
  }
  entries.sort((a, b) => a.name.localeCompare(b.name));
  for (const entry of entries) {
    if (skip.has(entry.name)) continue;
    const entryPath = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
    if (entry.isFile()) {
      yield {
        path: entryPath,
        directory: false,
        read: (maxBytes) => readAt(directory, entry.name, maxBytes, false, entryPath).catch(() => null),
      };
      continue;
    }
    if (!entry.isDirectory()) continue;
    yield { path: entryPath, directory: true, read: async () => null };
    const child = await fs.promises
      .open(at(directory, entry.name), O_RDONLY | O_DIRECTORY | O_NOFOLLOW)
      .catch(() => null);
    if (!child) continue;
    try {
      yield* walkDirectory(child, entryPath, skip);
    } finally {
      await child.close();
    }
  }
}

/**
 * Removes a workspace tree without following anything in it: each entry is unlinked (or emptied and rmdir'ed)
 * through the handle of its directory, so a run that swaps a directory for a link mid-removal only makes an
 * unlink remove the link. Directories deeper than REMOVE_DEPTH are moved up to the top first, so a very deep tree
 * does not take one file descriptor per level. `directory` itself is the server's (its path is not run-controlled).
 */
export async function removeTree(directory: string): Promise<void> {
  let top: FileHandle;
  try {
    top = await fs.promises.open(directory, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  } catch (error) {
    if (code(error) === 'ENOENT') return;
    if (code(error) === 'ENOTDIR' || code(error) === 'ELOOP') return fs.promises.unlink(directory);
    throw error;
  }
  try {
    const moved = { count: 0 };
    for (let pass = 0; pass < REMOVE_PASSES; pass++) {
      const names = await fs.promises.readdir(at(top));
      if (names.length === 0) break;
      for (const name of names) await removeEntry(top, name, top, 1, moved);
    }
  } finally {
    await top.close();
  }
  await fs.promises.rmdir(directory);
}

async function removeEntry(
  parent: FileHandle,
  name: string,
  top: FileHandle,
  depth: number,
  moved: { count: number },
): Promise<void> {
  const target = at(parent, name);
  try {
    await fs.promises.unlink(target);
    return;
  } catch (error) {
    if (code(error) === 'ENOENT') return;
    if (code(error) !== 'EISDIR' && code(error) !== 'EPERM') throw error;
  }
  if (depth >= REMOVE_DEPTH) {
    // Taken up to the top, where a later pass removes it.
    await fs.promises.rename(target, at(top, `.hangar-removing-${moved.count++}`));
    return;
  }
  let child: FileHandle;
  try {
    child = await fs.promises.open(target, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  } catch (error) {
    // Swapped for something else since: whatever it is now is removed without being followed.
    if (code(error) === 'ENOTDIR' || code(error) === 'ELOOP') return fs.promises.unlink(target);
    if (code(error) === 'ENOENT') return;
    throw error;
  }
  try {
    for (const entry of await fs.promises.readdir(at(child))) await removeEntry(child, entry, top, depth + 1, moved);
  } finally {
    await child.close();
  }
  await fs.promises.rmdir(target).catch((error: unknown) => {
    // Swapped for a link or a file after it was emptied: removed as what it is now.
    if (code(error) === 'ENOTDIR') return fs.promises.unlink(target);
    if (code(error) !== 'ENOENT') throw error;
  });
}
