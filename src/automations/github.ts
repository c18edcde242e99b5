import { type Kysely, sql } from 'kysely';
import type { DB } from '../database.js';
import {
  APP_REPLAY_SCOPE,
  type AppDelivery,
  type GitHubEventKind,
  type IssueThread,
  threadName,
  threadRunConfig,
} from '../github/index.js';
import { savedBy } from '../identities/index.js';
import type { RunRequest } from '../runs/index.js';
import { deliveryPrompt, payloadFiles } from './envelope.js';
import { evaluatePayloadFilter } from './filter.js';
import type { GitHubTrigger } from './schemas.js';
import { type AutomationRow, insertFirings } from './store.js';

/**
 * Automations with a `github` trigger: a team's choice of which GitHub App deliveries start what. A team that has
 * any (enabled or not) decides through them alone; the built-in triggers serve the teams that have none.
 */

/** The team's automations with a `github` trigger, disabled ones too (they still say the team chose). */
export async function githubAutomations(db: Kysely<DB>, teamUid: string): Promise<AutomationRow[]> {
  return (await db
    .selectFrom('automations')
    .selectAll()
    .where('team_uid', '=', teamUid)
    .where(sql<boolean>`triggers @> ${JSON.stringify([{ provider: 'github' }])}::jsonb`)
    .orderBy('id')
    .execute()) as AutomationRow[];
}

/** Whether one of the automation's `github` triggers takes a delivery of this kind with this body. */
export function githubTriggerMatches(automation: AutomationRow, kind: GitHubEventKind, payload: unknown): boolean {
  if (!automation.enabled) return false;
  return automation.triggers.some((trigger) => {
    if (trigger.provider !== 'github' || trigger.event !== kind) return false;
    const filter = (trigger as GitHubTrigger).filter?.payload;
    return filter === undefined || evaluatePayloadFilter(filter, payload).matched;
  });
}

export interface GitHubDelivery {
  deliveryId: string;
  payload: unknown;
  /** Which thread the delivery is about (`owner/repo#n (url)`), said after the automation's prompt. */
  thread: string;
  title: string;
  /** The environment that names the repository, when the automation names none. */
  environmentId: string | undefined;
  /** A same-repository pull request's branch for the run to work on (a review), unless the automation names one. */
  github?: { branch: string };
  /** The comment, review or thread on GitHub that started it (the run's trigger_url). */
  url?: string;
}

/** The run an automation starts for a GitHub delivery: its prompt and settings, the delivery fenced as data. */
export function githubRunRequest(automation: AutomationRow, delivery: GitHubDelivery): RunRequest {
  const config = { ...(automation.agent_config ?? {}) };
  if (config.environment_id === undefined && delivery.environmentId !== undefined)
    config.environment_id = delivery.environmentId;
  const own = (config.github ?? {}) as Record<string, unknown>;
  if (delivery.github && own.branch === undefined) config.github = { ...own, branch: delivery.github.branch };
  return {
    owner: savedBy(automation.team_uid, automation.created_by_uid),
    body: {
      prompt: deliveryPrompt(`${automation.prompt.trimEnd()}\n\nThe GitHub thread: ${delivery.thread}.`, {
        webhookName: 'GitHub App',
        webhookUid: APP_REPLAY_SCOPE,
        deliveryId: delivery.deliveryId,
      }),
      title: `${automation.name}: ${delivery.title}`,
      ...(Object.keys(config).length > 0 ? { config } : {}),
      ...(automation.agent_uid ? { agent_identity_uid: automation.agent_uid } : {}),
      team: true,
    },
    origin: {
      source: 'GITHUB_WEBHOOK',
      automation: { id: automation.id, factoryUid: automation.factory_uid },
      ...(delivery.url ? { triggerUrl: delivery.url } : {}),
    },
    files: payloadFiles(JSON.stringify(delivery.payload)),
  };
}

/**
 * The runs a team's `github` automations ask for a delivery about `thread` (the GitHub triggers' port), without their
 * owner: the automation's saver is not who asked, the GitHub slice decides the creator. Undefined when the team has
 * no such automation, enabled or not: then the built-in triggers decide for it.
 */
export async function githubAutomationRuns(
  db: Kysely<DB>,
  teamUid: string,
  delivery: AppDelivery,
  thread: IssueThread,
  environmentId: string | undefined,
): Promise<Array<{ automationId: string; request: Omit<RunRequest, 'owner'> }> | undefined> {
  const automations = await githubAutomations(db, teamUid);
  if (automations.length === 0) return undefined;
  return automations
    .filter((automation) => githubTriggerMatches(automation, thread.kind, delivery.payload))
    .map((automation) => {
      const { owner: _saver, ...request } = githubRunRequest(automation, {
        deliveryId: delivery.deliveryId,
        payload: delivery.payload,
        thread: threadName(thread),
        title: `${thread.owner}/${thread.repo}#${thread.number}`,
        environmentId,
        github: threadRunConfig(thread).github,
        url: thread.comment?.url || thread.url,
      });
      return { automationId: automation.id, request };
    });
}

/**
 * What the automations did with a GitHub delivery: per automation that matched, its run or why none started (count
 * them with observeFirings once the transaction has committed).
 */
export async function recordGitHubFirings(
  db: Kysely<DB>,
  delivery: { deliveryId: string; kind: GitHubEventKind },
  firings: Array<{ automationId: string; runId: string | null; error: string | null }>,
): Promise<void> {
  await insertFirings(
    db,
    firings.map((firing) => ({
      delivery_seq: null,
      automation_id: firing.automationId,
      run_id: firing.runId,
      error: firing.error,
      github_delivery_id: delivery.deliveryId,
      github_event: delivery.kind,
    })),
  );
}
