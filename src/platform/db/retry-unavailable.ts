import { isDatabaseUnavailable } from './sql-state.js';

export interface RetryOptions {
  /** How long to keep trying after the first failure, in milliseconds; then the last error is thrown. */
  forMs: number;
  /** Told of each failure that will be retried (for a log line). */
  onRetry?: (error: unknown, attempt: number) => void;
}

/** First wait and ceiling of the backoff: a restart of a few seconds is noticed within a second of its end. */
const FIRST_DELAY_MS = 50;
const MAX_DELAY_MS = 1000;

/**
 * Runs `work` until it succeeds, trying again with backoff while the database is unavailable (connection refused
 * or lost, shutting down, starting up: isDatabaseUnavailable) for up to `forMs`. Any other failure is thrown at
 * once. Only for work that is safe to repeat: a statement that failed this way did not commit, except in the
 * instant between a commit and its answer, so an insert retried here is written at least once.
 */
export async function retryWhileUnavailable<T>(work: () => Promise<T>, options: RetryOptions): Promise<T> {
  let deadline: number | undefined;
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (!isDatabaseUnavailable(error)) throw error;
      deadline ??= Date.now() + options.forMs;
      const ceiling = Math.min(MAX_DELAY_MS, FIRST_DELAY_MS * 2 ** (attempt - 1));
      // Jittered, so the writes of many executions do not all come back in the same instant.
      const delay = ceiling / 2 + Math.random() * (ceiling / 2);
      if (Date.now() + delay > deadline) throw error;
      options.onRetry?.(error, attempt);
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}
