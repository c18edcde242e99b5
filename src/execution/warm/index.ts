import type { Kysely } from 'kysely';
import type { Config } from '../../config.js';
import type { DB } from '../../database.js';
import { EnvironmentSnapshots } from '../../environments/index.js';
import type { SandboxMode } from '../sandbox/backend.js';
import type { Workspaces } from '../workspace/workspace.js';
import { SnapshotFiles } from './snapshot-files.js';
import { WarmStarts } from './warm-start.js';

export { WarmStarts };

/**
 * The warm starts of a server's engine: undefined when snapshots are off (HANGAR_SNAPSHOT_TTL=0). Where the sandbox
 * keeps them with an image (capabilities.snapshot, the container sandbox), a snapshot is also its container, committed.
 */
export function warmStartsFor(
  config: Config,
  db: Kysely<DB>,
  sandbox: SandboxMode,
  workspaces: Workspaces,
  warn: (error: unknown, message: string) => void,
): WarmStarts | undefined {
  if (config.snapshotTtlSeconds === 0) return undefined;
  const images = sandbox.imageSnapshots();
  return new WarmStarts({
    snapshots: new EnvironmentSnapshots(db, config.snapshotTtlSeconds),
    files: new SnapshotFiles(config.snapshotDir, config.runUser, (directory) => workspaces.layers.inUse(directory)),
    workspaces,
    sandbox: sandbox.kind,
    ...(images ? { images } : {}),
    setupNetwork: config.setupNetwork,
    maxBytes: config.snapshotMaxBytes,
    warn,
  });
}
