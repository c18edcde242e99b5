import fs from 'node:fs';
import path from 'node:path';
import type { RunUser } from '../backend.js';

/** Top-level directories a bwrap sandbox gets fresh ones of (--proc, --dev, --tmpfs): never bound from the host. */
const FRESH = new Set(['/proc', '/dev', '/tmp', '/run']);

/**
 * The bind arguments that show a bwrap sandbox `source` (the host's root, or a path it must still see), read-only,
 * without the hidden directories below it and without anything mounted below those (issue 47, finding 10).
 *
 * A bind of `/` takes every mount below it along: covering the data directory with a tmpfs afterwards hid its
 * files, but /proc/self/mountinfo inside still listed the warm workspaces of other runs (their run IDs, their
 * snapshots' paths) mounted there on the host. So a directory on the way to a hidden one is not bound whole: it is
 * made on the sandbox's own root and each of its entries bound by itself, down to the hidden directory, which stays
 * an empty directory. Nothing mounted below a hidden directory then exists in the sandbox at all.
 *
 * An entry that goes between the listing and bwrap's start is skipped (`--ro-bind-try`). A directory the sandbox's
 * user cannot pass through is left empty: it could not see into it anyway, and bwrap (as that user) could not bind
 * what is in it.
 */
export function boundWithout(
  source: string,
  hidden: string[],
  runAs: RunUser | undefined,
  skip: Set<string> = new Set(),
): string[] {
  const below = hidden.filter((directory) => directory !== source && isInside(source, directory));
  if (hidden.includes(source)) return ['--dir', source];
  if (below.length === 0 && source !== '/') return ['--ro-bind-try', source, source];
  if (!passable(source, runAs)) return ['--dir', source];
  const args = source === '/' ? [] : ['--dir', source];
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(source, { withFileTypes: true });
  } catch {
    return args;
  }
  for (const entry of entries) {
    const child = path.join(source, entry.name);
    if (skip.has(child)) continue;
    if (entry.isSymbolicLink()) {
      const target = fs.readlinkSync(child, { encoding: 'utf8' });
      args.push('--symlink', target, child);
    } else if (entry.isDirectory()) args.push(...boundWithout(child, below, runAs));
    else args.push('--ro-bind-try', child, child);
  }
  return args;
}

/** The host's root for a bwrap sandbox: boundWithout('/'), without what the sandbox gets fresh. */
export function sandboxRoot(hidden: string[], runAs: RunUser | undefined): string[] {
  return boundWithout('/', hidden, runAs, FRESH);
}

function isInside(outer: string, inner: string): boolean {
  return outer === '/' ? inner.startsWith('/') : inner.startsWith(`${outer}/`);
}

/** Whether the sandbox's user may pass through `directory` (the run user of a root server, else the server's). */
function passable(directory: string, runAs: RunUser | undefined): boolean {
  try {
    if (!runAs || process.getuid?.() !== 0) {
      fs.accessSync(directory, fs.constants.X_OK);
      return true;
    }
    const stat = fs.statSync(directory);
    if (stat.uid === runAs.uid) return (stat.mode & 0o100) !== 0;
    if (stat.gid === runAs.gid) return (stat.mode & 0o010) !== 0;
    return (stat.mode & 0o001) !== 0;
  } catch {
    return false;
  }
}
