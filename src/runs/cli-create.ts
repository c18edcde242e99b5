// `hangar run`'s create request. A create whose answer is lost (the connection drops, the server restarts, the
// database is briefly down) may still have been committed, so the CLI sends one Idempotency-Key per invocation
// and asks again with it: the server answers the run it already made instead of making a second one.
import { randomUUID } from 'node:crypto';
import { ApiProblem, jsonOf, problemOf } from '../platform/http/api-fetch.js';
import { type ClientOptions, sendApiAnswer } from '../platform/http/client.js';
import type { CreatedRun } from './idempotency.js';
import type { RunItem } from './schemas.js';

/** Attempts in all, and the wait before the second one (doubled each time, unless the server says Retry-After). */
const ATTEMPTS = 4;
const FIRST_WAIT_MS = 500;
const MAX_WAIT_MS = 10_000;

/** The create's answer: the run, and why it waits when it does (queue_reason). */
export type CreateAnswer = CreatedRun &
  Pick<RunItem, 'queue_reason'> & {
    session_sharing?: {
      public_access: string;
      created_at: string;
      created_by: { type: string; uid: string };
      url?: string;
    };
  };

export async function createRunOnce(client: ClientOptions, body: Record<string, unknown>): Promise<CreateAnswer> {
  const init = {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': randomUUID() },
    body: JSON.stringify(body),
  };
  let waitMs = FIRST_WAIT_MS;
  for (let attempt = 1; ; attempt++) {
    let retryAfterMs: number | undefined;
    try {
      const response = await sendApiAnswer(client, '/agent/runs', init);
      if (response.ok) return await jsonOf<CreateAnswer>(response);
      const problem = await problemOf(response);
      if (attempt >= ATTEMPTS || !worthRetrying(problem)) throw problem;
      const seconds = Number(response.headers.get('retry-after'));
      if (Number.isFinite(seconds) && seconds > 0) retryAfterMs = Math.min(seconds * 1000, MAX_WAIT_MS);
    } catch (error) {
      // No answer at all (unreachable, or cut off before the whole answer came): the run may exist.
      if (error instanceof ApiProblem || attempt >= ATTEMPTS) throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, retryAfterMs ?? waitMs));
    waitMs = Math.min(waitMs * 2, MAX_WAIT_MS);
  }
}

/** A server-side failure or one the server calls retryable; a refusal of the request itself is final. */
function worthRetrying(problem: ApiProblem): boolean {
  return problem.status >= 500 || problem.problem.retryable === true;
}
