import fs from 'node:fs';
import type { RunUser } from './types.js';

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
 * user): the data directory and the workspace root become traversable, not listable. What lies in them stays
 * private by its own mode (keys 0600, the database 0700, each workspace its owner's).
 */
export function allowRunUserToWorkspaces(config: { dataDir: string; workspaceDir: string }): void {
  for (const directory of [config.dataDir, config.workspaceDir]) {
    fs.mkdirSync(directory, { recursive: true, mode: 0o711 });
    fs.chmodSync(directory, 0o711);
  }
}
