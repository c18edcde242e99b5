import fs from 'node:fs';
import path from 'node:path';

/** A tool asked for a path outside the workspace; its message is what the model reads. */
export class PathEscapeError extends Error {
  constructor(requested: string) {
    super(`${requested} is outside the workspace; use a path relative to the workspace root`);
    this.name = 'PathEscapeError';
  }
}

function inside(root: string, target: string): boolean {
  return target === root || target.startsWith(`${root}${path.sep}`);
}

/**
 * The absolute path for a tool's `requested` path (relative to the workspace, or absolute inside it). Refuses
 * `..` escapes, absolute paths elsewhere, and paths that leave the workspace through a symbolic link.
 */
export async function resolveInWorkspace(workspace: string, requested: string): Promise<string> {
  const root = await fs.promises.realpath(workspace);
  const lexicalRoot = path.resolve(workspace);
  const raw = requested.trim() === '' ? '.' : requested;
  // An absolute path may name the workspace through either its given or its real location.
  const base = path.isAbsolute(raw) && inside(lexicalRoot, path.resolve(raw)) && !inside(root, path.resolve(raw)) ? lexicalRoot : root;
  const target = path.resolve(base, raw);
  if (!inside(base, target)) throw new PathEscapeError(requested);
  const rebased = path.join(root, path.relative(base, target));
  // The deepest part that exists must really be inside (no link leading out).
  let existing = rebased;
  for (;;) {
    try {
      const real = await fs.promises.realpath(existing);
      if (!inside(root, real)) throw new PathEscapeError(requested);
      break;
    } catch (error) {
      if (error instanceof PathEscapeError) throw error;
      const parent = path.dirname(existing);
      if (parent === existing) break;
      existing = parent;
    }
  }
  return rebased;
}

/** The path as the model should see it: relative to the workspace, `.` for the root. */
export function displayPath(root: string, absolute: string): string {
  return path.relative(root, absolute) || '.';
}
