import fs from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { at, readAt } from './handles.js';

const { O_RDONLY, O_NOFOLLOW, O_DIRECTORY } = fs.constants;

export interface WalkEntry {
  /** Relative to the workspace root, `/`-separated. */
  path: string;
  directory: boolean;
  /** A file's bytes (at most maxBytes, else null), through the handle of its directory; null when unreadable. */
  read(maxBytes: number): Promise<Buffer | null>;
}

/**
 * What WorkspaceFiles.walk yields: everything under the directory a handle holds, in name order, each directory opened
 * relative to its parent's handle without following it; links are neither listed nor followed.
 */
export async function* walkDirectory(
  directory: FileHandle,
  prefix: string,
  skip: Set<string>,
): AsyncGenerator<WalkEntry> {
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
