// Its own module, free of the protocol's schemas: `hangar worker` checks its --worker-id before it loads anything.

/** A worker ID names a machine of the team; empty or `warp...` would be mistaken for Hangar's own executors. */
export function workerIdProblem(id: string | undefined): string | null {
  if (id === undefined || id.trim() === '') return 'worker_id is required';
  if (id.toLowerCase().startsWith('warp'))
    return 'worker_id must not start with "warp" (reserved for hosted execution)';
  if (id.length > 200) return 'worker_id must be at most 200 characters';
  if (!/^[\x21-\x7e]+$/.test(id)) return 'worker_id must be printable characters without spaces';
  return null;
}
