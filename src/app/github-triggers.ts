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
  countTriggerStart,
  type IssueThread,
  registerAppWebhookRoute,
  type RepositoryPermission,
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

/**
 * One run a delivery asks for: a team's built-in trigger (no automation) or one of its `github` automations. Who it
 * is created as is decided by who asked (admit), never by who saved the environment or the automation.
 */
interface PlannedRun {
  teamUid: string;
  automationId: string | undefined;
  request: Omit<RunRequest, 'owner'>;
}

/** A planned run whose sender may start it, with the creator that decided. */
interface AdmittedRun extends PlannedRun {
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
  const limits = {
    perRepository: config.githubApp?.runsPerHourPerRepository ?? 30,
    perUser: config.githubApp?.runsPerHourPerUser ?? 10,
  };

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
            origin: { source: 'GITHUB_WEBHOOK', triggerUrl: thread.comment?.url || thread.url },
            files: payloadFiles(JSON.stringify(delivery.payload)),
          },
        });
        continue;
      }
      for (const automation of automations) {
        if (!githubTriggerMatches(automation, thread.kind, delivery.payload)) continue;
        // The automation's saver is not who asked: the creator is decided by admit().
        const { owner: _saver, ...request } = githubRunRequest(automation, {
          deliveryId: delivery.deliveryId,
          payload: delivery.payload,
          thread: threadName(thread),
          title: `${thread.owner}/${thread.repo}#${thread.number}`,
          environmentId: environment?.uid,
          github: threadRunConfig(thread).github,
          url: thread.comment?.url || thread.url,
        });
        planned.push({ teamUid, automationId: automation.id, request });
      }
    }
    return planned;
  };

  /**
   * Who each team's runs are created as (the login's mapped user, or the link's service identity when the login has
   * write access); a team missing from the map starts nothing. GitHub is asked for the permission once at most.
   */
  const admit = async (thread: IssueThread, teamUids: string[]): Promise<Map<string, string>> => {
    let permission: Promise<RepositoryPermission> | undefined;
    const ask = () =>
      (permission ??= services.github.repositoryPermission(
        thread.installationId,
        thread.owner,
        thread.repo,
        thread.sender,
      ));
    const creators = new Map<string, string>();
    for (const teamUid of teamUids) {
      const creator = await services.github.triggerCreator(teamUid, thread.installationId, thread.sender, ask);
      if (creator !== undefined) creators.set(teamUid, creator);
    }
    return creators;
  };

  /** The one answer in the thread for a refusal; the delivery's outcome does not wait on GitHub taking it. */
  const refuse = async (thread: IssueThread, reason: 'access' | 'rate') => {
    platform.log.info(
      { repository: `${thread.owner}/${thread.repo}`, number: thread.number, sender: thread.sender, reason },
      'GitHub delivery: nothing started for its sender',
    );
    await services.github
      .replyRefused(thread, thread.sender, reason)
      .catch((error) => platform.log.warn({ err: error }, 'GitHub refusal reply not posted'));
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
      const wanted = await plan(delivery, thread);
      if (wanted.length === 0) return { duplicate: false, runs: [] };
      // Only GitHub users with write access to the repository (asked of GitHub, whatever the delivery's
      // author_association says), or on the link's allow-list, start runs; each run is created as the user the
      // login maps to, or as the link's service identity, never as the environment's or automation's creator.
      const creators = await admit(thread, [...new Set(wanted.map((run) => run.teamUid))]);
      if (creators.size === 0) {
        await refuse(thread, 'access');
        return { duplicate: false, runs: [], ignored: 'the sender may not start runs here' };
      }
      const planned: AdmittedRun[] = wanted
        .filter((run) => creators.has(run.teamUid))
        .map((run) => ({
          ...run,
          request: { ...run.request, owner: savedBy(run.teamUid, creators.get(run.teamUid)!) },
        }));
      // Each planned run has its own replay key (the delivery's, the team's and the automation's): claimed with the
      // run's creation in one transaction, and given back when that run is refused, so that GitHub's redelivery
      // starts what did not start without starting again what did.
      const keyOf = (run: PlannedRun) => `${delivery.replayKey}:${run.teamUid}:${run.automationId ?? 'built-in'}`;
      let committed:
        | { outcomes: Awaited<ReturnType<typeof services.runs.createWithin>>; runs: AdmittedRun[]; started: Started[] }
        | undefined;
      try {
        committed = await db.transaction().execute(async (trx) => {
          const fresh: AdmittedRun[] = [];
          for (const run of planned)
            if (await claimReplayKey(trx, APP_REPLAY_SCOPE, keyOf(run), APP_REPLAY_KEY_DAYS)) fresh.push(run);
          if (fresh.length === 0) return undefined;
          const outcomes = await services.runs.createWithin(
            trx,
            fresh.map((run) => run.request),
          );
          const started: Started[] = [];
          for (const [i, outcome] of outcomes.entries()) {
            if (outcome instanceof ApiError) {
              // Refused (an environment or agent gone, a budget spent, a secret the creator may not use): its key
              // is given back, so that GitHub's redelivery tries again once that is fixed.
              await releaseReplayKey(trx, APP_REPLAY_SCOPE, keyOf(fresh[i]!));
              continue;
            }
            await services.artifacts.recordExternalReference(outcome.run_id, fresh[i]!.teamUid, thread.url, trx);
            started.push({ teamUid: fresh[i]!.teamUid, runId: outcome.run_id });
          }
          // A delivery that starts runs counts against its repository's and its sender's hourly limits; one past
          // them starts nothing (the whole transaction rolls back: keys, runs, firings).
          if (
            started.length > 0 &&
            !(await countTriggerStart(trx, `${thread.owner}/${thread.repo}`, thread.sender, limits))
          )
            throw new RateLimited();
          await recordGitHubFirings(
            trx,
            { deliveryId: delivery.deliveryId, kind: thread.kind },
            fresh.flatMap((run, i) => {
              if (run.automationId === undefined) return [];
              const outcome = outcomes[i]!;
              return [
                outcome instanceof ApiError
                  ? { automationId: run.automationId, runId: null, error: outcome.detail }
                  : { automationId: run.automationId, runId: outcome.run_id, error: null },
              ];
            }),
          );
          return { outcomes, runs: fresh, started };
        });
      } catch (error) {
        if (!(error instanceof RateLimited)) throw error;
        await refuse(thread, 'rate');
        return { duplicate: false, runs: [], ignored: 'too many runs started from this repository or sender' };
      }
      if (!committed) return { duplicate: true, runs: [] };
      const { outcomes, runs, started } = committed;
      services.runs.announceQueued(outcomes.created);
      const fired = runs.map((run, i) => [run, outcomes[i]!] as const).filter(([run]) => run.automationId);
      observeFirings(
        fired.filter(([, outcome]) => !(outcome instanceof ApiError)).length,
        fired.filter(([, outcome]) => outcome instanceof ApiError).length,
      );
      for (const [i, outcome] of outcomes.entries()) {
        if (outcome instanceof ApiError)
          platform.log.warn(
            { team_uid: runs[i]!.teamUid, automation_id: runs[i]!.automationId, reason: outcome.detail },
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

/** A run a delivery started, in its team. */
interface Started {
  teamUid: string;
  runId: string;
}

/** Thrown inside the delivery's transaction to roll it back when a limit refuses the delivery. */
class RateLimited extends Error {}
