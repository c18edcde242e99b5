import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import type { DB } from '../database.js';
import { savedBy } from '../identities/index.js';
import {
  type RunRequest,
  type RunsService,
  startTriggeredRuns,
  type TriggerDecision,
  type TriggerOutcome,
} from '../runs/index.js';
import { APP_REPLAY_KEY_DAYS, APP_REPLAY_SCOPE, type AppDelivery, registerAppWebhookRoute } from './app-webhook.js';
import type { GitHubService, RepositoryPermission } from './service.js';
import { countTriggerStart } from './trigger-records.js';
import {
  classify,
  type GitHubEventKind,
  type IssueThread,
  startsByDefault,
  teamsOfInstallation,
  threadInstructions,
  threadRunConfig,
} from './triggers.js';

/**
 * What the GitHub App's triggers need of other slices, given by the composition root: the slice depends on none of
 * them (the automations slice depends on this one), only on these shapes.
 */
export interface GitHubTriggerPorts {
  db: Kysely<DB>;
  runs: RunsService;
  github: GitHubService;
  log: FastifyBaseLogger;
  settings: {
    /** The App's handle a comment mentions. */
    handle: string;
    /** The label that starts the built-in trigger's run, if any. */
    label: string | undefined;
    limits: { perRepository: number; perUser: number };
    webhookSecret: string | undefined;
    authFailuresPerMinute: number;
  };
  /** The team's oldest environment naming the thread's repository (the built-in trigger's, an automation's default). */
  environmentNaming(teamUid: string, thread: IssueThread): Promise<{ uid: string } | undefined>;
  automations: {
    /**
     * The runs the team's `github` automations ask for this delivery (the owner is decided here, by who asked);
     * undefined when the team has none, so the built-in trigger decides.
     */
    plan(
      teamUid: string,
      delivery: AppDelivery,
      thread: IssueThread,
      environmentId: string | undefined,
    ): Promise<Array<{ automationId: string; request: Omit<RunRequest, 'owner'> }> | undefined>;
    record(
      trx: Kysely<DB>,
      delivery: { deliveryId: string; kind: GitHubEventKind },
      firings: Array<{ automationId: string; runId: string | null; error: string | null }>,
    ): Promise<void>;
    observe(started: number, refused: number): void;
  };
  /** The delivery fenced as untrusted data in the prompt, and its payload as the run's event-payload.json. */
  envelope: {
    prompt(instructions: string, source: { webhookName: string; webhookUid: string; deliveryId: string }): string;
    files(body: string): NonNullable<RunRequest['files']>;
  };
  /** The thread recorded as the run's external reference. */
  recordReference(trx: Kysely<DB>, runId: string, teamUid: string, url: string): Promise<void>;
  replayKeys: {
    claim(trx: Kysely<DB>, scope: string, key: string, days: number): Promise<boolean>;
    release(trx: Kysely<DB>, scope: string, key: string): Promise<void>;
  };
  authFailures: {
    counts(scope: string, sender: string): Promise<{ failuresNow: number; failuresBefore: number; elapsed: number }>;
    record(scope: string, sender: string): Promise<void>;
  };
}

/**
 * One run a delivery asks for: a team's built-in trigger (no automation) or one of its `github` automations. Who it
 * is created as is decided by who asked (admit), never by who saved the environment or the automation.
 */
interface PlannedRun {
  teamUid: string;
  automationId: string | undefined;
  request: Omit<RunRequest, 'owner'>;
}

/** A planned run whose sender may start it, created as the creator that decided. */
interface AdmittedRun extends PlannedRun {
  request: RunRequest;
}

/** A run a delivery started, in its team. */
interface Started {
  teamUid: string;
  runId: string;
}

/** What a delivery's transaction committed: an outcome per run asked for, and the runs started. */
interface Committed {
  outcomes: TriggerOutcome<AdmittedRun>[];
  started: Started[];
}

/** Thrown inside the delivery's transaction to roll it back when a limit refuses the delivery. */
class RateLimited extends Error {}

/**
 * Runs started from GitHub: the App's webhook. Each team that linked the installation gets: with `github`
 * automations, a run per automation whose trigger takes the delivery; without any, the built-in triggers' one run, in
 * its oldest environment naming the repository.
 */
export async function registerGitHubTriggers(root: FastifyInstance, ports: GitHubTriggerPorts): Promise<void> {
  const { db, settings, log } = ports;

  const plan = async (delivery: AppDelivery, thread: IssueThread): Promise<PlannedRun[]> => {
    const planned: PlannedRun[] = [];
    for (const teamUid of await teamsOfInstallation(db, thread.installationId)) {
      const environment = await ports.environmentNaming(teamUid, thread);
      const automations = await ports.automations.plan(teamUid, delivery, thread, environment?.uid);
      if (automations !== undefined) {
        planned.push(...automations.map((run) => ({ teamUid, ...run })));
        continue;
      }
      if (!environment || !startsByDefault(thread, settings.label)) continue;
      planned.push({
        teamUid,
        automationId: undefined,
        request: {
          body: {
            prompt: ports.envelope.prompt(threadInstructions(thread), {
              webhookName: 'GitHub App',
              webhookUid: APP_REPLAY_SCOPE,
              deliveryId: delivery.deliveryId,
            }),
            title: `${thread.owner}/${thread.repo}#${thread.number}`,
            config: { environment_id: environment.uid, ...threadRunConfig(thread) },
            team: true,
          },
          origin: { source: 'GITHUB_WEBHOOK', triggerUrl: thread.comment?.url || thread.url },
          files: ports.envelope.files(JSON.stringify(delivery.payload)),
        },
      });
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
      (permission ??= ports.github.repositoryPermission(
        thread.installationId,
        thread.owner,
        thread.repo,
        thread.sender,
      ));
    const creators = new Map<string, string>();
    for (const teamUid of teamUids) {
      const creator = await ports.github.triggerCreator(teamUid, thread.installationId, thread.sender, ask);
      if (creator !== undefined) creators.set(teamUid, creator);
    }
    return creators;
  };

  /** The one answer in the thread for a refusal; the delivery's outcome does not wait on GitHub taking it. */
  const refuse = async (thread: IssueThread, reason: 'access' | 'rate') => {
    log.info(
      { repository: `${thread.owner}/${thread.repo}`, number: thread.number, sender: thread.sender, reason },
      'GitHub delivery: nothing started for its sender',
    );
    await ports.github
      .replyRefused(thread, thread.sender, reason)
      .catch((error) => log.warn({ err: error }, 'GitHub refusal reply not posted'));
  };

  /**
   * The admitted runs started in one transaction: each with its own replay key (the delivery's, the team's and the
   * automation's), claimed with the run's creation and given back when that run is refused, so that GitHub's
   * redelivery starts what did not start without starting again what did. Undefined when every key was claimed
   * before (a redelivery).
   */
  const start = (delivery: AppDelivery, thread: IssueThread, planned: AdmittedRun[]) => {
    const keyOf = (run: PlannedRun) => `${delivery.replayKey}:${run.teamUid}:${run.automationId ?? 'built-in'}`;
    return startTriggeredRuns(
      db,
      ports.runs,
      async (trx): Promise<TriggerDecision<AdmittedRun, Committed | undefined>> => {
        const fresh: AdmittedRun[] = [];
        for (const run of planned)
          if (await ports.replayKeys.claim(trx, APP_REPLAY_SCOPE, keyOf(run), APP_REPLAY_KEY_DAYS)) fresh.push(run);
        return {
          runs: fresh.map((run) => ({ item: run, request: run.request })),
          record: async (trx, outcomes) => {
            if (fresh.length === 0) return undefined;
            const started: Started[] = [];
            for (const { item: run, runId } of outcomes) {
              if (runId === undefined) {
                // Refused (an environment or agent gone, a budget spent, a secret the creator may not use): its key
                // is given back, so that GitHub's redelivery tries again once that is fixed.
                await ports.replayKeys.release(trx, APP_REPLAY_SCOPE, keyOf(run));
                continue;
              }
              await ports.recordReference(trx, runId, run.teamUid, thread.url);
              started.push({ teamUid: run.teamUid, runId });
            }
            // A delivery that starts runs counts against its repository's and its sender's hourly limits; one past
            // them starts nothing (the whole transaction rolls back: keys, runs, firings).
            if (
              started.length > 0 &&
              !(await countTriggerStart(trx, `${thread.owner}/${thread.repo}`, thread.sender, settings.limits))
            )
              throw new RateLimited();
            await ports.automations.record(
              trx,
              { deliveryId: delivery.deliveryId, kind: thread.kind },
              outcomes.flatMap(({ item: run, runId, refused }) =>
                run.automationId === undefined
                  ? []
                  : [{ automationId: run.automationId, runId: runId ?? null, error: refused?.detail ?? null }],
              ),
            );
            return { outcomes, started };
          },
        };
      },
    );
  };

  await registerAppWebhookRoute(root, {
    secret: settings.webhookSecret,
    authFailures: {
      perMinute: settings.authFailuresPerMinute,
      counts: (sender) => ports.authFailures.counts(APP_REPLAY_SCOPE, sender),
      record: (sender) => ports.authFailures.record(APP_REPLAY_SCOPE, sender),
    },
    dispatch: async (delivery) => {
      const thread = classify(delivery.event, delivery.payload, settings.handle);
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
      let committed: Awaited<ReturnType<typeof start>>;
      try {
        committed = await start(delivery, thread, planned);
      } catch (error) {
        if (!(error instanceof RateLimited)) throw error;
        await refuse(thread, 'rate');
        return { duplicate: false, runs: [], ignored: 'too many runs started from this repository or sender' };
      }
      if (!committed) return { duplicate: true, runs: [] };
      const { outcomes, started } = committed;
      const fired = outcomes.filter(({ item }) => item.automationId);
      ports.automations.observe(
        fired.filter((outcome) => !outcome.refused).length,
        fired.filter((outcome) => outcome.refused).length,
      );
      for (const { item: run, refused } of outcomes) {
        if (refused)
          log.warn(
            { team_uid: run.teamUid, automation_id: run.automationId, reason: refused.detail },
            'GitHub delivery: run not started',
          );
      }
      for (const { runId } of started) {
        // The run goes ahead whether or not GitHub takes the reply.
        await ports.github
          .replyStarted({ ...thread, runId })
          .catch((error) => log.warn({ err: error, run_id: runId }, 'GitHub reply not posted'));
      }
      return { duplicate: false, runs: started.map((run) => run.runId) };
    },
  });
}
