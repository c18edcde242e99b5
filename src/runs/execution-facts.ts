// Reads other slices make of one execution's run: whose rights to team secrets it carries, and the pull requests
// Hangar itself published for it.
import type { Kysely } from 'kysely';
import type { DB } from '../database.js';
import type { SecretUser } from './collaborators.js';
import { ACTIVE_STATES } from './lifecycle/states.js';

/**
 * Whose rights to team secrets an execution carries (its team, creator, agent identity, environment), while it is
 * the run's current execution and the run is active; with `sandboxRunning`, only while its sandbox runs (the
 * harness-support calls of its agent). undefined otherwise.
 */
export async function executionSecretUser(
  db: Kysely<DB>,
  runId: string,
  executionId: number,
  options: { sandboxRunning: boolean },
): Promise<SecretUser | undefined> {
  let query = db
    .selectFrom('runs')
    .select(['team_uid', 'creator_uid', 'executor_type', 'executor_uid', 'environment_id'])
    .where('id', '=', runId)
    .where('execution_id', '=', executionId)
    .where('state', 'in', ACTIVE_STATES);
  if (options.sandboxRunning) query = query.where('sandbox_running', '=', true);
  const row = await query.executeTakeFirst();
  if (!row) return undefined;
  return {
    teamUid: row.team_uid,
    creatorUid: row.creator_uid,
    agentUid: row.executor_type === 'service_account' ? row.executor_uid : null,
    environmentId: row.environment_id,
  };
}

/**
 * Whose GitHub identity a run's tokens stand for (config.credential_strategy, resolved and recorded at creation:
 * runs/create-request.ts), with its creator. A run recorded before the field existed is EXECUTOR; undefined for no run.
 */
export async function runCredentialStrategy(
  db: Kysely<DB>,
  runId: string,
): Promise<{ strategy: 'CREATOR' | 'EXECUTOR'; creatorUid: string } | undefined> {
  const row = await db
    .selectFrom('runs')
    .select(['agent_config', 'creator_uid'])
    .where('id', '=', runId)
    .executeTakeFirst();
  if (!row) return undefined;
  const strategy = row.agent_config.credential_strategy === 'CREATOR' ? 'CREATOR' : 'EXECUTOR';
  return { strategy, creatorUid: row.creator_uid };
}

/** A pull request Hangar's own publication opened or updated for a run (its timeline's GitHub events). */
export interface PublishedPullRequest {
  /** `owner/repo` as the run's environment names it. */
  repo: string;
  url: string;
  number: number;
}

/**
 * The pull requests Hangar published for each run, oldest first. Read from the timeline events only the executor
 * writes (`github_pull_request_opened` and `_updated`, with GitHub's own address of the pull request): a harness
 * can report any PULL_REQUEST artifact, but not these.
 */
export async function publishedPullRequests(
  db: Kysely<DB>,
  runIds: readonly string[],
): Promise<Map<string, PublishedPullRequest[]>> {
  const published = new Map<string, PublishedPullRequest[]>();
  if (runIds.length === 0) return published;
  const rows = await db
    .selectFrom('run_events')
    .select(['run_id', 'payload'])
    .where('run_id', 'in', [...runIds])
    .where('event_type', 'in', ['github_pull_request_opened', 'github_pull_request_updated'])
    .orderBy('seq')
    .execute();
  for (const row of rows) {
    const payload = (typeof row.payload === 'string' ? JSON.parse(row.payload) : row.payload) as Record<
      string,
      unknown
    > | null;
    const { repo, url, number } = payload ?? {};
    if (typeof repo !== 'string' || typeof url !== 'string' || typeof number !== 'number') continue;
    published.set(row.run_id, [...(published.get(row.run_id) ?? []), { repo, url, number }]);
  }
  return published;
}
