import fs from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { WorkspacePathError } from './paths.js';

/**
 * The handle-relative primitives of files.ts: a name inside the directory a handle holds, an open that follows
 * nothing, a regular file read through the handle it was opened with, and the refusal an error of the kernel becomes.
 */

const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK } = fs.constants;

/** The name `name` inside the directory `handle` holds, as a path the kernel resolves relative to that handle. */
export function at(handle: FileHandle, name = ''): string {
  return name === '' ? `/proc/self/fd/${handle.fd}` : `/proc/self/fd/${handle.fd}/${name}`;
}

export function code(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

export function translate(error: unknown, relative: string): Error {
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
export async function openAt(
  parent: FileHandle,
  name: string,
  flags: number,
  relative: string,
): Promise<FileHandle | null> {
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
export async function readAt(
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
