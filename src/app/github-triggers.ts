import type { FastifyInstance } from 'fastify';
import {
  deliveryPrompt,
  githubAutomations,
  githubRunRequest,
  githubTriggerMatches,
  observeFirings,
  payloadFiles,
  recordGitHubFirings,
} from '../automations/index.js';
import {
  type AppDelivery,
  APP_REPLAY_KEY_DAYS,
  APP_REPLAY_SCOPE,
  classify,
  type IssueThread,
  registerAppWebhookRoute,
  startsByDefault,
  teamsOfInstallation,
  threadInstructions,
  threadName,
  threadRunConfig,
} from '../github/index.js';
import { savedBy } from '../identities/index.js';
import { ApiError } from '../platform/http/errors.js';
import type { RunRequest } from '../runs/index.js';
import { authFailureCounts, claimReplayKey, countAuthFailure, releaseReplayKey } from '../webhooks/index.js';
import type { Platform } from './platform.js';
import type { Services } from './services.js';

/** One run a delivery asks for: a team's built-in trigger (no automation) or one of its `github` automations. */
interface PlannedRun {
  teamUid: string;
  automationId: string | undefined;
  request: RunRequest;
}

/**
 * Runs started from GitHub: the App's webhook, wired to the slices it needs (runs to start, artifacts to record the
 * thread as the run's external reference, the automations that choose per team, the webhooks' replay store). Each
 * team that linked the installation gets: with `github` automations, a run per automation whose trigger takes the
 * delivery; without any, the built-in triggers' one run, in its oldest environment naming the repository.
 */
export async function registerGitHubTriggers(root: FastifyInstance, platform: Platform, services: Services) {
  const { db, config } = platform;
  const handle = config.githubApp?.handle ?? 'hangar';

  const plan = async (delivery: AppDelivery, thread: IssueThread): Promise<PlannedRun[]> => {
    const planned: PlannedRun[] = [];
    for (const teamUid of await teamsOfInstallation(db, thread.installationId)) {
      const environment = await services.environments.oldestNaming(teamUid, thread);
      const automations = await githubAutomations(db, teamUid);
      if (automations.length === 0) {
        if (!environment || !startsByDefault(thread, config.githubApp?.label)) continue;
        planned.push({
          teamUid,
          automationId: undefined,
          request: {
            owner: savedBy(teamUid, environment.creatorUid),
            body: {
              prompt: deliveryPrompt(threadInstructions(thread), {
                webhookName: 'GitHub App',
                webhookUid: APP_REPLAY_SCOPE,
                deliveryId: delivery.deliveryId,
              }),
              title: `${thread.owner}/${thread.repo}#${thread.number}`,
              config: { environment_id: environment.uid, ...threadRunConfig(thread) },
              team: true,
            },
            origin: { source: 'GITHUB_WEBHOOK' },
            files: payloadFiles(JSON.stringify(delivery.payload)),
          },
        });
        continue;
      }
      for (const automation of automations) {
        if (!githubTriggerMatches(automation, thread.kind, delivery.payload)) continue;
        planned.push({
          teamUid,
          automationId: automation.id,
          request: githubRunRequest(automation, {
            deliveryId: delivery.deliveryId,
            payload: delivery.payload,
            thread: threadName(thread),
            title: `${thread.owner}/${thread.repo}#${thread.number}`,
            environmentId: environment?.uid,
            github: threadRunConfig(thread).github,
          }),
        });
      }
    }
    return planned;
  };

  await registerAppWebhookRoute(root, {
    secret: config.githubApp?.webhookSecret,
    authFailures: {
      perMinute: config.webhookAuthFailuresPerMinute,
      counts: (sender) => authFailureCounts(db, APP_REPLAY_SCOPE, sender),
      record: (sender) => countAuthFailure(db, APP_REPLAY_SCOPE, sender),
    },
    dispatch: async (delivery) => {
      const thread = classify(delivery.event, delivery.payload, handle);
      if (!thread) return { duplicate: false, runs: [] };
      const planned = await plan(delivery, thread);
      if (planned.length === 0) return { duplicate: false, runs: [] };
      // The replay key, the runs, their references and the automations' firings commit together: a delivery whose
      // runs fail to start leaves no key behind, so GitHub's redelivery starts them.
      const committed = await db.transaction().execute(async (trx) => {
        if (!(await claimReplayKey(trx, APP_REPLAY_SCOPE, delivery.replayKey, APP_REPLAY_KEY_DAYS))) return undefined;
        const outcomes = await services.runs.createWithin(
          trx,
          planned.map((run) => run.request),
        );
        const started: Array<{ teamUid: string; runId: string }> = [];
        for (const [i, outcome] of outcomes.entries()) {
          if (outcome instanceof ApiError) continue;
          await services.artifacts.recordExternalReference(outcome.run_id, planned[i]!.teamUid, thread.url, trx);
          started.push({ teamUid: planned[i]!.teamUid, runId: outcome.run_id });
        }
        await recordGitHubFirings(
          trx,
          { deliveryId: delivery.deliveryId, kind: thread.kind },
          planned.flatMap((run, i) => {
            if (run.automationId === undefined) return [];
            const outcome = outcomes[i]!;
            return [
              outcome instanceof ApiError
                ? { automationId: run.automationId, runId: null, error: outcome.detail }
                : { automationId: run.automationId, runId: outcome.run_id, error: null },
            ];
          }),
        );
        // Refused everywhere (an environment or agent gone, a budget spent): the key is given back, so that GitHub's
        // redelivery tries again once that is fixed.
        if (started.length === 0) await releaseReplayKey(trx, APP_REPLAY_SCOPE, delivery.replayKey);
        return { outcomes, started };
      });
      if (!committed) return { duplicate: true, runs: [] };
      const { outcomes, started } = committed;
      services.runs.announceQueued(outcomes.created);
      const fired = planned.map((run, i) => [run, outcomes[i]!] as const).filter(([run]) => run.automationId);
      observeFirings(
        fired.filter(([, outcome]) => !(outcome instanceof ApiError)).length,
        fired.filter(([, outcome]) => outcome instanceof ApiError).length,
      );
      for (const [i, outcome] of outcomes.entries()) {
        if (outcome instanceof ApiError)
          platform.log.warn(
            { team_uid: planned[i]!.teamUid, automation_id: planned[i]!.automationId, reason: outcome.detail },
            'GitHub delivery: run not started',
          );
      }
      for (const { runId } of started) {
        // The run goes ahead whether or not GitHub takes the reply.
        await services.github
          .replyStarted({ ...thread, runId })
          .catch((error) => platform.log.warn({ err: error, run_id: runId }, 'GitHub reply not posted'));
      }
      return { duplicate: false, runs: started.map((run) => run.runId) };
    },
  });
}
