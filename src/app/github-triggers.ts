import type { FastifyInstance } from 'fastify';
import { deliveryPrompt, PAYLOAD_FILE } from '../automations/index.js';
import { registerAppWebhookRoute, APP_REPLAY_SCOPE, mentioningComment, teamsOfInstallation } from '../github/index.js';
import { labelledIssue, threadInstructions } from '../github/index.js';
import { savedBy } from '../identities/index.js';
import { ApiError } from '../platform/http/errors.js';
import { claimReplayKey } from '../webhooks/index.js';
import type { Platform } from './platform.js';
import type { Services } from './services.js';

/**
 * Runs started from GitHub: the App's webhook, wired to the slices it needs (runs to start, artifacts to record the
 * issue as the run's external reference, the webhooks' replay store). Each team that linked the installation and
 * has an environment naming the repository gets one run, in its oldest such environment.
 */
export async function registerGitHubTriggers(root: FastifyInstance, platform: Platform, services: Services) {
  const { db, config } = platform;
  const handle = config.githubApp?.handle ?? 'hangar';
  await registerAppWebhookRoute(root, {
    secret: config.githubApp?.webhookSecret,
    claimReplayKey: (key) => claimReplayKey(db, APP_REPLAY_SCOPE, key, null),
    dispatch: async (event, deliveryId, payload) => {
      const thread =
        mentioningComment(event, payload, handle) ?? labelledIssue(event, payload, config.githubApp?.label);
      if (!thread) return [];
      const started: string[] = [];
      for (const teamUid of await teamsOfInstallation(db, thread.installationId)) {
        const environment = await services.environments.oldestNaming(teamUid, thread);
        if (!environment) continue;
        const outcomes = await db.transaction().execute((trx) =>
          services.runs.createWithin(trx, [
            {
              owner: savedBy(teamUid, environment.creatorUid),
              body: {
                prompt: deliveryPrompt(threadInstructions(thread), {
                  webhookName: 'GitHub App',
                  webhookUid: APP_REPLAY_SCOPE,
                  deliveryId,
                }),
                title: `${thread.owner}/${thread.repo}#${thread.number}`,
                config: { environment_id: environment.uid },
                team: true,
              },
              origin: { source: 'GITHUB_WEBHOOK' },
              files: [
                {
                  file_name: PAYLOAD_FILE,
                  mime_type: 'application/json',
                  data: Buffer.from(JSON.stringify(payload), 'utf8'),
                },
              ],
            },
          ]),
        );
        services.runs.announceQueued(outcomes.created);
        const outcome = outcomes[0]!;
        if (outcome instanceof ApiError) {
          platform.log.warn({ team_uid: teamUid, reason: outcome.detail }, 'GitHub mention: run not started');
          continue;
        }
        await services.artifacts.recordExternalReference(outcome.run_id, teamUid, thread.url);
        // The run goes ahead whether or not GitHub takes the reply.
        await services.github
          .replyStarted({ ...thread, runId: outcome.run_id })
          .catch((error) => platform.log.warn({ err: error, run_id: outcome.run_id }, 'GitHub reply not posted'));
        started.push(outcome.run_id);
      }
      return started;
    },
  });
}
