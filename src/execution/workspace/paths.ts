import path from 'node:path';

/** Why the server will not use a path a run's workspace holds (files.ts), and the path text it judges first. */

export type RefusalReason =
  | 'missing'
  | 'outside'
  | 'link'
  | 'not-file'
  | 'not-directory'
  | 'too-large'
  | 'denied'
  | 'invalid'
  | 'changed';

/** A path the server will not use; the message is safe to show to the run (it names only the requested path). */
export class WorkspacePathError extends Error {
  override name = 'WorkspacePathError';
  constructor(
    readonly path: string,
    readonly reason: RefusalReason,
    /** The message without the path. */
    readonly detail: string = REASONS[reason],
  ) {
    super(`${path}: ${detail}`);
  }
}

const REASONS: Record<RefusalReason, string> = {
  missing: 'no such file or directory in the workspace',
  outside: 'the path leads outside the workspace',
  link: 'a symbolic link, which the server does not follow here',
  'not-file': 'not a regular file',
  'not-directory': 'not a directory',
  'too-large': 'the file is too large',
  denied: 'permission denied',
  invalid: 'not a valid path',
  changed: 'it kept changing while the server looked at it',
};

/**
 * A path a run named, relative to its workspace: relative paths as they are, absolute ones only when they name
 * something under the workspace's own path (compared as text: nothing outside the workspace is looked at).
 */
export function workspaceRelative(workspace: string, requested: string): string {
  if (!path.isAbsolute(requested)) return requested;
  const relative = path.relative(path.resolve(workspace), path.resolve(requested));
  if (relative === '') return '.';
  if (relative.startsWith('..') || path.isAbsolute(relative)) throw new WorkspacePathError(requested, 'outside');
  return relative;
}

/** A relative path in its shortest form, '' for the root. */
export function normalized(relative: string): string {
  const clean = path.posix.normalize(relative);
  return clean === '.' || clean === './' ? '' : clean.replace(/^\.\//, '').replace(/\/$/, '');
}

export function components(relative: string): string[] {
  if (relative.includes('\0')) throw new WorkspacePathError(relative, 'invalid');
  return relative.split('/').filter((part) => part !== '' && part !== '.');
}
