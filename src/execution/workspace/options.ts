import type { GitObjectCache } from '../../platform/git/object-cache.js';
import type { SandboxMode } from '../sandbox/backend.js';
import type { FileOwner } from './files.js';

/** What a workspace root's parts share (workspace.ts, clone.ts, setup-commands.ts, own-commands.ts). */
export interface WorkspaceOptions {
  /** Workspaces live under here, one directory per execution. */
  root: string;
  gitBaseUrl: string;
  sandbox: SandboxMode;
  /** Hidden from sandboxed processes (the data directory: database files, keys). */
  hiddenPaths: string[];
  setupTimeoutMs: number;
  setupNetwork: boolean;
  maxOutputBytes: number;
  /** Who the run's processes run as: what the server creates in a workspace is theirs (unset: the server's user). */
  owner?: FileOwner;
  /** The mirrors repositories are cloned from (in the server's data directory). */
  gitCache: GitObjectCache;
}

export type SetupResult = { ok: true } | { ok: false; message: string };

/** Records a timeline event of the workspace's preparation. */
export type Report = (type: string, payload: Record<string, unknown>) => Promise<void>;
