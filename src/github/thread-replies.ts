import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { DB } from '../database.js';
import { PollingLoop } from '../platform/loop.js';

/** The runs' ended states (the lifecycle's TERMINAL_STATES), where an outcome can be told. */
const ENDED = ['SUCCEEDED', 'FAILED', 'ERROR', 'BLOCKED', 'CANCELLED'] as const;

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

/** Replies whose run has ended and whose outcome is not told yet, with the pull request the run opened. */
export async function endedReplies(db: Kysely<DB>, limit: number): Promise<EndedReply[]> {
  const rows = await db
    .selectFrom('github_thread_replies as r')
    .innerJoin('runs', 'runs.id', 'r.run_id')
    .select(['r.run_id', 'r.installation_id', 'r.owner', 'r.repo', 'r.comment_id', 'runs.state'])
    .where('r.outcome_posted', '=', false)
    .where('runs.state', 'in', [...ENDED])
    .orderBy('r.created_at')
    .limit(limit)
    .execute();
  const result: EndedReply[] = [];
  for (const row of rows) {
    const pull = await db
      .selectFrom('artifacts')
      .select('data')
      .where('run_id', '=', row.run_id)
      .where('artifact_type', '=', 'PULL_REQUEST')
      .orderBy('created_at', 'desc')
      .executeTakeFirst();
    const data = (typeof pull?.data === 'string' ? JSON.parse(pull.data) : pull?.data) as { url?: unknown } | undefined;
    result.push({
      runId: row.run_id,
      installationId: Number(row.installation_id),
      owner: row.owner,
      repo: row.repo,
      commentId: Number(row.comment_id),
      state: row.state,
      pullRequestUrl: typeof data?.url === 'string' ? data.url : undefined,
    });
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
