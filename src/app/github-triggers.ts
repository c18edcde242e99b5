import type { FastifyInstance } from 'fastify';
import {
  deliveryPrompt,
  githubAutomationRuns,
  observeFirings,
  payloadFiles,
  recordGitHubFirings,
} from '../automations/index.js';
import { registerGitHubTriggers as registerTriggers } from '../github/index.js';
import { authFailureCounts, claimReplayKey, countAuthFailure, releaseReplayKey } from '../webhooks/index.js';
import type { Platform } from './platform.js';
import type { Services } from './services.js';

/**
 * Runs started from GitHub: the github slice's App webhook and triggers (src/github/trigger-dispatch.ts), given the
 * slices they need as ports: runs to start, artifacts to record the thread as the run's external reference, the
 * automations that choose per team, the environments that name a repository, the webhooks' replay store.
 */
export async function registerGitHubTriggers(root: FastifyInstance, platform: Platform, services: Services) {
  const { db, config } = platform;
  await registerTriggers(root, {
    db,
    runs: services.runs,
    github: services.github,
    log: platform.log,
    settings: {
      handle: config.githubApp?.handle ?? 'hangar',
      label: config.githubApp?.label,
      limits: {
        perRepository: config.githubApp?.runsPerHourPerRepository ?? 30,
        perUser: config.githubApp?.runsPerHourPerUser ?? 10,
      },
      webhookSecret: config.githubApp?.webhookSecret,
      authFailuresPerMinute: config.webhookAuthFailuresPerMinute,
    },
    environmentNaming: (teamUid, thread) => services.environments.oldestNaming(teamUid, thread),
    automations: {
      plan: (teamUid, delivery, thread, environmentId) =>
        githubAutomationRuns(db, teamUid, delivery, thread, environmentId),
      record: recordGitHubFirings,
      observe: observeFirings,
    },
    envelope: { prompt: deliveryPrompt, files: payloadFiles },
    recordReference: (trx, runId, teamUid, url) => services.artifacts.recordExternalReference(runId, teamUid, url, trx),
    replayKeys: { claim: claimReplayKey, release: releaseReplayKey },
    authFailures: {
      counts: (scope, sender) => authFailureCounts(db, scope, sender),
      record: (scope, sender) => countAuthFailure(db, scope, sender),
    },
  });
}
