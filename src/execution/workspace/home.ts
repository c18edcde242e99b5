import fs from 'node:fs';
import path from 'node:path';
import { type FileOwner, WorkspaceFiles } from './files.js';

/** The HOME of an execution's processes, relative to its workspace. */
export const HOME_DIRECTORY = '.home';

/**
 * The HOME of an execution's processes, inside its workspace; made when the first process needs it. A setup
 * command may have put a link (or a file) there: that is refused, the server never writes through it.
 */
export async function workspaceHome(directory: string, owner?: FileOwner): Promise<string> {
  const home = path.join(directory, HOME_DIRECTORY);
  try {
    // One system call in the usual case. By path, safely: the workspace's own path is the server's, and mkdir never
    // follows a link in the last component (it fails with EEXIST).
    await fs.promises.mkdir(home, { mode: 0o700 });
    // lchown: were it swapped for a link meanwhile, the link would be changed, not what it points at.
    if (owner) await fs.promises.lchown(home, owner.uid, owner.gid);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    // Already there (made before the setup commands): it must still be a directory, not a link they put there.
    await WorkspaceFiles.with(directory, owner, (files) => files.mkdirs(HOME_DIRECTORY));
  }
  return home;
}

/** The directory of one execution under the workspace root: the name says whose it is, for any replica to judge. */
export function workspaceName(runId: string, executionId: number): string {
  return `${runId}.${executionId}`;
}
