import fs from 'node:fs';
import path from 'node:path';
import { normalized, WorkspacePathError, workspaceRelative } from '../../workspace/files.js';

/** A tool asked for a path outside the workspace; its message is what the model reads. */
export class PathEscapeError extends Error {
  constructor(requested: string) {
    super(`${requested} is outside the workspace; use a path relative to the workspace root`);
    this.name = 'PathEscapeError';
  }
}

/**
 * A tool's `requested` path (relative to the workspace, or absolute inside it) as a path relative to the workspace
 * root, '' for the root. Only text is looked at here: `..` climbing out and absolute paths elsewhere are refused;
 * links are resolved (beneath the root) when the file is opened, by workspace/files.ts.
 */
export async function resolveInWorkspace(workspace: string, requested: string): Promise<string> {
  const raw = requested.trim() === '' ? '.' : requested;
  let relative: string;
  try {
    relative = workspaceRelative(workspace, raw);
  } catch (error) {
    if (!(error instanceof WorkspacePathError)) throw error;
    // An absolute path may name the workspace through its real location too (the server's own path, not the run's).
    const real = await fs.promises.realpath(workspace);
    try {
      relative = workspaceRelative(real, raw);
    } catch {
      throw new PathEscapeError(requested);
    }
  }
  const clean = normalized(relative);
  if (clean === '..' || clean.startsWith('../') || path.isAbsolute(clean)) throw new PathEscapeError(requested);
  return clean;
}

/** The path as the model should see it: relative to the workspace, `.` for the root. */
export function displayPath(relative: string): string {
  return relative || '.';
}
