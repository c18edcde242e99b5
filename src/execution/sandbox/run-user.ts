import fs from 'node:fs';
import path from 'node:path';
import type { RunUser } from './backend.js';

/** The warning logged at start when the server itself runs as root; undefined otherwise. */
export function runUserWarning(runAs: RunUser | undefined): string | undefined {
  if (process.getuid?.() !== 0) return undefined;
  return (
    'WARNING: the server runs as root. Setup commands and harnesses run as uid ' +
    `${runAs?.uid}:${runAs?.gid} (HANGAR_RUN_USER) without capabilities, but the server process itself keeps root: ` +
    'run it as a dedicated user where you can.'
  );
}

/**
 * The run user reaches its workspace by path (bwrap binds it with the run user's rights; git clones into it as that
 * user): the data directory and the workspace root become traversable, not listable, and so does every level Hangar
 * makes on the way (its own workspace directory under /var/lib/hangar included). What lies in them stays private by
 * its own mode (keys 0600, the database 0700, each workspace its owner's).
 */
export function allowRunUserToWorkspaces(config: {
  dataDir: string;
  workspaceDir: string;
  snapshotDir: string;
  workspacesRelocated?: unknown;
}): void {
  const directories = [config.dataDir, config.workspaceDir];
  // Relocated snapshots: their root is made 0711 when the first is taken, the levels above it here.
  if (config.workspacesRelocated) directories.push(path.dirname(config.snapshotDir));
  for (const directory of directories) {
    makeTraversable(directory);
    fs.chmodSync(directory, 0o711);
  }
}

/** mkdir -p, each level it makes 0711 whatever the umask. */
function makeTraversable(directory: string): void {
  const missing: string[] = [];
  for (let current = path.resolve(directory); !fs.existsSync(current); current = path.dirname(current))
    missing.unshift(current);
  for (const level of missing) {
    try {
      fs.mkdirSync(level, { mode: 0o711 });
    } catch (error) {
      // Made meanwhile by another server: its mode is its maker's.
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') continue;
      throw error;
    }
    fs.chmodSync(level, 0o711);
  }
}
