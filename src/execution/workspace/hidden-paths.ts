import path from 'node:path';
import type { Config } from '../../config.js';
import { OWN_WORKSPACE_BASE } from '../sandbox/workspace-root.js';

/**
 * What sandboxed processes must not see: the data directory (database files, keys), every execution's workspace
 * but their own (bwrap binds that one back in) and the setup snapshots, wherever they are. Hangar's own directory for
 * relocated workspaces is hidden whole: it holds every data directory's on this machine.
 */
export function sandboxHiddenPaths(config: Pick<Config, 'dataDir' | 'workspaceDir' | 'snapshotDir'>): string[] {
  const inside = (outer: string, inner: string) => !path.relative(outer, inner).startsWith('..');
  const candidates = [config.dataDir, config.workspaceDir, config.snapshotDir].map((directory) =>
    inside(OWN_WORKSPACE_BASE, directory) ? OWN_WORKSPACE_BASE : directory,
  );
  return candidates.filter(
    (directory, index) =>
      !candidates.some((other, at) => at < index && inside(other, directory)) &&
      !candidates.some((other, at) => at > index && other !== directory && inside(other, directory)),
  );
}
