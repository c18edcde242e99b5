import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { DB } from '../database.js';
import { PollingLoop } from '../platform/loop.js';
import { endedRunStates, publishedPullRequests } from '../runs/index.js';
import { threadPullRequest } from './thread-pull-request.js';

export interface EndedReply {
  runId: string;
  installationId: number;
  owner: string;
  repo: string;
  commentId: number;
  state: string;
  pullRequestUrl: string | undefined;
}

export async function recordReply(
  db: Kysely<DB>,
  reply: { runId: string; installationId: number; owner: string; repo: string; commentId: number },
): Promise<void> {
  await db
    .insertInto('github_thread_replies')
    .values({
      run_id: reply.runId,
      installation_id: reply.installationId,
      owner: reply.owner,
      repo: reply.repo,
      comment_id: reply.commentId,
    })
    .execute();
}

/** Pending replies read per look at the runs: they are the runs GitHub started that are going or untold. */
const PENDING_PAGE = 500;

/**
 * Replies whose run has ended and whose outcome is not told yet, with the pull request Hangar published for the
 * thread's repository (threadPullRequest). The runs' states and publications come from the runs slice's public
 * reads; the pending replies are paged through (by run ID) until `limit` ended ones are found (most pending replies
 * are runs still going).
 */
export async function endedReplies(db: Kysely<DB>, limit: number): Promise<EndedReply[]> {
  const result: EndedReply[] = [];
  let after: string | undefined;
  while (result.length < limit) {
    let query = db
      .selectFrom('github_thread_replies')
      .select(['run_id', 'installation_id', 'owner', 'repo', 'comment_id'])
      .where('outcome_posted', '=', false);
    if (after !== undefined) query = query.where('run_id', '>', after);
    const pending = await query.orderBy('run_id').limit(PENDING_PAGE).execute();
    if (pending.length === 0) break;
    const ids = pending.map((row) => row.run_id);
    const states = await endedRunStates(db, ids);
    const pulls = await publishedPullRequests(
      db,
      ids.filter((id) => states.has(id)),
    );
    for (const row of pending) {
      const state = states.get(row.run_id);
      if (state === undefined || result.length >= limit) continue;
      result.push({
        runId: row.run_id,
        installationId: Number(row.installation_id),
        owner: row.owner,
        repo: row.repo,
        commentId: Number(row.comment_id),
        state,
        pullRequestUrl: threadPullRequest(pulls.get(row.run_id), row),
      });
    }
    after = pending.at(-1)!.run_id;
    if (pending.length < PENDING_PAGE) break;
  }
  return result;
}

export async function markTold(db: Kysely<DB>, runId: string): Promise<void> {
  await db.updateTable('github_thread_replies').set({ outcome_posted: true }).where('run_id', '=', runId).execute();
}

/**
 * Tells each ended run's outcome in the comment Hangar posted when it started. A poll over the replies table (not a
 * hook in one process's executor) so that a run ended anywhere (a worker, a cancel, the reaper) is told, once.
 */
export function threadReplyLoop(tell: () => Promise<number>, log: FastifyBaseLogger, intervalMs = 2_000): PollingLoop {
  return new PollingLoop({
    intervalMs,
    waitFirst: true,
    pass: async () => ((await tell()) > 0 ? 'now' : undefined),
    onError: (error) => log.warn({ err: error }, 'telling a run outcome on GitHub failed; retrying'),
  });
}
