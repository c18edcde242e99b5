import fs from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { at, code } from './handles.js';

const { O_RDONLY, O_NOFOLLOW, O_DIRECTORY } = fs.constants;

/** Directories held open at once while removing a tree; deeper ones are moved up to the top first. */
const REMOVE_DEPTH = 32;
/** Passes over the top of a tree being removed (each one removes what is there, or moves deep parts up). */
const REMOVE_PASSES = 10_000;

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
