import path from 'node:path';
import { ArtifactsService } from '../artifacts/index.js';
import { AuditLog } from '../audit/index.js';
import { AutomationsService } from '../automations/index.js';
import { BudgetsService } from '../budgets/index.js';
import {
  EnvironmentSnapshots,
  EnvironmentsService,
  GitMirror,
  SkillCatalog,
  SkillsService,
} from '../environments/index.js';
import type { EnvironmentSetups, Harness, TaskTokens } from '../execution/index.js';
import {
  allowRunUserToWorkspaces,
  configuredHarnesses,
  containerPolicy,
  eventReader,
  resolveServerSandbox,
  sandboxHiddenPaths,
  transcriptFormat,
} from '../execution/index.js';
import { FactoriesService, FactoryDefinitions, FactoryDispatch, teamSkills } from '../factory/index.js';
import { GitHubService, RunGitHubAccess } from '../github/index.js';
import { AdminService, AgentsService, AuthFailureThrottle, findTeamMember, roleInTeam } from '../identities/index.js';
import type { ResolvedDefinition } from '../mcp/index.js';
import { McpServersService } from '../mcp/index.js';
import { MessagesService } from '../messages/index.js';
import { type BuiltInHarness, isBuiltInHarness, ModelCatalogue } from '../models/index.js';
import { OverviewService } from '../overview/index.js';
import type { Database } from '../platform/db/connect.js';
import { ApiError } from '../platform/http/errors.js';
import { AddressPolicy } from '../platform/net/address-policy.js';
import { RunnersService } from '../runners/index.js';
import {
  HARNESS_TYPES,
  RunActivity,
  RunLifecycle,
  RunOutputs,
  RunSharing,
  RunsService,
  runEventsSince,
  runPlaces,
} from '../runs/index.js';
import { SchedulesService } from '../schedules/index.js';
import { ScoresService } from '../scores/index.js';
import { SecretsService } from '../secrets/index.js';
import { WebhooksService } from '../webhooks/index.js';
import { reportedSkills } from '../workers/index.js';
import { authenticator } from './authenticate.js';
import type { Platform } from './platform.js';
import { canExecute, queueFacts } from './readiness.js';

/** What a run needs to start, wherever it executes: in this server's engine or on a worker. */
export interface RunSetup {
  db: Database['db'];
  lifecycle: RunLifecycle;
  environments: EnvironmentSetups;
  tokens: TaskTokens;
  apiUrl: () => string;
  readSecret: (teamUid: string, name: string) => Promise<string | null>;
  /** A registered MCP server as a run of the team starts it (secrets filled in); throws when it cannot be used. */
  mcpServer: (teamUid: string, uid: string) => Promise<ResolvedDefinition>;
}

export type Services = ReturnType<typeof buildServices>;

/**
 * The slices' services, each built once with its dependencies. They never reach a background loop: what they
 * have to wake (engines, worker hubs, the scheduler) listens on the bus.
 */
export function buildServices(
  platform: Platform,
  options: { now?: () => Date; harnesses?: Harness[]; role?: 'api' | 'engine' | 'all' },
) {
  const { config, db, bus, cursors, signer, tokens, address } = platform;
  const apiUrl = address.apiUrl;
  const hiddenPaths = sandboxHiddenPaths(config);
  // HANGAR_SANDBOX=kubernetes: run code runs in Job pods only (execution/kubernetes/), never in this process
  // (sandbox.runsInJobs; app/loops.ts builds the Jobs' engine then).
  const sandbox = resolveServerSandbox(config.sandbox, {
    runAs: config.runUser,
    apiUrl,
    readOnlyPaths: config.sandboxReadOnlyPaths,
    container: () => containerPolicy(config, hiddenPaths),
  });
  if (config.runUser) allowRunUserToWorkspaces(config);
  const models = new ModelCatalogue(config.operator.catalogue, config.modelCredentials);
  const harnesses = configuredHarnesses(config, sandbox.mode, hiddenPaths, true);
  for (const harness of options.harnesses ?? []) harnesses.set(harness.name, harness);
  const limits = { global: config.maxConcurrentRuns, perTeam: config.maxConcurrentRunsPerTeam };

  const lifecycle = new RunLifecycle(db);
  const runners = new RunnersService({
    db,
    defaults: config.container.limits,
    policy: {
      // HANGAR_SANDBOX as given (an explicit kind never falls back to another), else the kind auto chose.
      sandbox: config.sandbox?.trim() || sandbox.mode.kind,
      maximums: config.container.maximums,
      runtimeClasses: [
        ...(config.kubernetes.runtimeClassName ? [config.kubernetes.runtimeClassName] : []),
        ...config.runnerRuntimeClasses,
      ],
      runsInPods: sandbox.runsInJobs,
    },
  });
  const runActivity = new RunActivity(db);
  const environments = new EnvironmentsService({
    db,
    runActivity,
    snapshots: new EnvironmentSnapshots(db, config.snapshotTtlSeconds),
    limitMaximums: config.container.maximums,
    runnerExists: (teamUid, uid) => runners.exists(db, teamUid, uid),
    // Bound late: the secrets service is made below (and asks the environments which of them a team reaches).
    unusableSecrets: (user, names) => secrets.unusableSecrets(db, user, names),
  });
  const skills = new SkillsService({
    environments,
    runActivity,
    workerSkills: (teamUid) => reportedSkills(db, teamUid),
    factorySkills: (teamUid, within) => teamSkills(within ?? db, teamUid),
    catalog: new SkillCatalog({
      git: new GitMirror({
        baseUrl: config.gitBaseUrl,
        cacheDir: path.join(config.dataDir, 'git-cache'),
        maxBytes: config.gitCacheMaxBytes,
      }),
      refreshSeconds: config.gitRefreshSeconds,
    }),
  });
  // Secrets and agents check each other's names (a secret scoped to an agent, an agent naming secrets); these
  // calls happen on requests, once both exist.
  const secrets: SecretsService = new SecretsService({
    db,
    key: platform.secretKey,
    roleInTeam,
    agentExists: async (teamUid, uid) => (await agents.findForRun(db, teamUid, uid)) !== undefined,
    environmentAccessible: (teamUid, environmentId) => environments.isAccessible(teamUid, environmentId),
    secretsAllowedIn: (trx, teamUid, environmentId) => environments.secretsAllowed(teamUid, environmentId, trx),
  });
  const agents = new AgentsService({
    db,
    planMaxAgents: config.planMaxAgents,
    environmentAccessible: (teamUid, environmentId) => environments.isAccessible(teamUid, environmentId),
    missingSecrets: (teamUid, names) => secrets.missingSecrets(teamUid, names),
    knownModel: (modelId) => models.find(modelId) !== undefined,
    runnerExists: (trx, teamUid, uid) => runners.exists(trx, teamUid, uid),
  });
  const addressPolicy = new AddressPolicy(config.mcpAllowedHosts);
  const mcpServers = new McpServersService({ db, secrets, addressPolicy });
  const budgets = new BudgetsService({ db, now: options.now });
  const audit = new AuditLog({ db, cursors, log: platform.log });
  const authThrottle = new AuthFailureThrottle(db, config.authFailuresPerMinute);
  const outputs = new RunOutputs({
    db,
    signer,
    harnessFormat: (name) => (harnesses.has(name) ? transcriptFormat(harnesses.get(name)!) : 'events'),
    eventReader: (name) => eventReader(name === null ? undefined : harnesses.get(name)),
  });
  const runEnvironments = {
    isAccessible: (teamUid: string, uid: string, trx: Database['db']) => environments.isAccessible(teamUid, uid, trx),
    secretsForRun: async (teamUid: string, uid: string, trx: Database['db']) => [
      ...(await environments.secretsForRun(teamUid, uid, trx)),
      ...(await runGitHub.secretsForEnvironment(trx, teamUid, uid)),
    ],
    sandboxSecretsForRun: (teamUid: string, uid: string, trx: Database['db']) =>
      runGitHub.secretsForEnvironment(trx, teamUid, uid),
  };
  const sharing = new RunSharing({
    db,
    lifecycle,
    outputs,
    access: { mcpServers, secrets, environments: runEnvironments },
    publicUrl: () => address.url,
    throttle: authThrottle,
    audit,
  });
  const runs = new RunsService({
    db,
    lifecycle,
    sharing,
    skills,
    // A run whose environment's repositories the team's GitHub token covers uses that secret without naming it.
    environments: runEnvironments,
    mcpServers,
    secrets,
    agents,
    runners: {
      forRun: (trx, teamUid, uid) => runners.forRun(trx, teamUid, uid),
      environmentDefault: (trx, teamUid, environmentId) => environments.defaultRunnerFor(teamUid, environmentId, trx),
    },
    cursors,
    publicUrl: () => address.url,
    metadataFiltering: config.metadataFiltering,
    limits,
    addressPolicy,
    harnessNames: () => [...new Set([...harnesses.keys(), ...HARNESS_TYPES])],
    modelRefusal: (modelId, harness, ownKey) => models.refusal(modelId, harness, ownKey),
    maxCostUsd: config.runMaxCostUsd,
    checkTeamBudget: (trx, teamUid) => budgets.checkNewRun(trx, teamUid),
    teamMember: (trx, teamUid, who) => findTeamMember(trx, teamUid, who),
    servedModel: (modelId, harness) => {
      // A run that named no model used its harness's default (oz when it named no harness either).
      const named = harness ?? 'oz';
      const model = modelId
        ? models.find(modelId)
        : isBuiltInHarness(named)
          ? models.defaultFor(named as BuiltInHarness)
          : undefined;
      return model && { model_id: model.id, input: model.cost.input, output: model.cost.output };
    },
    onQueued: () => bus.announceDispatch(),
    queueFacts: queueFacts(config, {
      role: options.role ?? 'all',
      executes: canExecute(config, models, options.harnesses),
    }),
  });
  const github = new GitHubService({
    db,
    app: config.githubApp,
    apiUrl: config.githubApiUrl,
    gitBaseUrl: config.gitBaseUrl,
    readSecret: (teamUid, name) => secrets.readSecretValue(teamUid, name),
    runUrl: (runId) => `${address.url}/runs/${encodeURIComponent(runId)}`,
  });
  // What executions get of GitHub (the engine's and the workers'): the team's token under its secret's grants.
  const runGitHub = new RunGitHubAccess({
    db,
    github,
    appConfigured: config.githubApp !== undefined,
    unusableSecrets: (trx, user, names) => secrets.unusableSecrets(trx, user, names),
    readSecret: (teamUid, name) => secrets.readSecretValue(teamUid, name),
    environmentRepos: async (trx, teamUid, uid) =>
      (await environments.accessibleRepositories(teamUid, trx))
        .filter((repository) => repository.environments.some((environment) => environment.uid === uid))
        .map((repository) => repository.ref),
  });
  const runSetup: RunSetup = {
    db,
    lifecycle,
    environments,
    tokens,
    apiUrl,
    readSecret: (teamUid, name) => secrets.readSecretValue(teamUid, name),
    mcpServer: (teamUid, uid) => mcpServers.resolveForRun(teamUid, uid),
  };
  const schedulesChanged = () => bus.schedulesChanged();
  const factories = new FactoriesService(db);
  const webhooks = new WebhooksService({
    db,
    factories,
    secrets,
    key: platform.secretKey,
    appUrl: () => address.url,
    cursors,
  });
  const automations = new AutomationsService({
    db,
    factories,
    webhooks,
    agents,
    now: options.now,
    onSchedulesChanged: schedulesChanged,
  });
  return {
    execution: { sandbox, hiddenPaths, harnesses, models, limits },
    runSetup,
    authenticate: authenticator(db, config, authThrottle),
    authThrottle,
    addressPolicy,
    runs,
    outputs,
    sharing,
    scores: new ScoresService({ db, runs }),
    artifacts: new ArtifactsService({ db, lifecycle, blobs: platform.blobs, signer, apiUrl }),
    schedules: new SchedulesService({
      db,
      agents,
      now: options.now,
      onChange: schedulesChanged,
      // A schedule shows its environment as its team sees it: one it cannot reach (any more) is left out.
      environmentConfig: (caller, uid) =>
        environments.get(caller, uid).then(
          (item) => item.config,
          (error: unknown) => {
            if (error instanceof ApiError && error.status === 404) return undefined;
            throw error;
          },
        ),
    }),
    environments,
    skills,
    secrets,
    mcpServers,
    runners,
    agents,
    models,
    admin: new AdminService({ db }),
    budgets,
    github,
    runGitHub,
    audit,
    factories,
    messages: new MessagesService({
      db,
      placesOf: (ids) => runPlaces(db, ids),
      eventsSince: (ids, since, limit) => runEventsSince(db, ids, since, limit),
      reportEvent: (event) => lifecycle.reportEvent(event),
    }),
    factoryDispatch: new FactoryDispatch({
      db,
      agentsOf: (teamUid, factoryUid) => agents.managedBy(db, teamUid, factoryUid),
      createRun: (caller, body) => runs.create(caller, body),
      runUrl: (runId) => `${address.url}/runs/${encodeURIComponent(runId)}`,
    }),
    definitions: new FactoryDefinitions({
      db,
      webhooks,
      automations,
      agents,
      runners,
      secrets,
      onApplied: schedulesChanged,
    }),
    webhooks,
    automations,
    overview: new OverviewService({ db, now: options.now }),
  };
}
