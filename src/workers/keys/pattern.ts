import { workerIdProblem } from '../worker-id.js';

/**
 * What a worker key is for: one worker ID (`build-7`), or a pattern where `*` stands for any run of characters
 * (`build-*`, or `*` for every worker of the team). Anything else in a pattern is literal.
 */
export function workerPatternProblem(pattern: string): string | null {
  // A pattern is checked as the ID it would be with its stars read as letters: printable, no spaces, no "warp".
  const problem = workerIdProblem(pattern.replaceAll('*', 'x'));
  return problem?.replace('worker_id', 'worker_id (or pattern)') ?? null;
}

export function matchesWorkerPattern(pattern: string, workerId: string): boolean {
  const source = pattern
    .split('*')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${source}$`, 's').test(workerId);
}
