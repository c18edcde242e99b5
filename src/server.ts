import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import type { Config } from './config.js';
import { registerEnvironmentRoutes } from './environments/http.js';
import { EnvironmentsService } from './environments/service.js';
import { SkillCatalog } from './environments/skills/catalog.js';
import { GitMirror } from './environments/skills/git.js';
import { registerSkillRoutes } from './environments/skills/http.js';
import { SkillsService } from './environments/skills/service.js';
import { ApiKeyAuthenticator, selectTeam } from './identities/authenticate.js';
import { AuthFailureThrottle } from './identities/auth-throttle.js';
import { roleInTeam } from './identities/store.js';
import { ApiError } from './platform/http/errors.js';
import { AdminService } from './identities/admin/service.js';
import { registerAdminRoutes } from './identities/admin/http.js';
import { registerAgentRoutes } from './identities/agents/http.js';
import { AgentsService } from './identities/agents/service.js';
import { bootstrapInstance, type BootstrapResult } from './identities/bootstrap.js';
import { registerMcpServerRoutes } from './mcp/http.js';
import { McpServersService } from './mcp/service.js';
import { AddressPolicy } from './platform/net/address-policy.js';
import { guardedDispatcher } from './platform/net/guarded-fetch.js';
import { registerEgressRoutes } from './egress/http.js';
import { openDatabase, type Database } from './platform/db/connect.js';
import { appliedVersions, loadMigrations, migrate } from './platform/db/migrate.js';
import { buildApp } from './platform/http/app.js';
import { CursorCodec } from './platform/http/pagination.js';
import { checkSecretKey, loadSecretKey } from './platform/secret-key.js';
import { instanceSecret } from './platform/settings.js';
import { RunActivity } from './runs/activity.js';
import { registerRunRoutes } from './runs/http.js';
import { RunsService } from './runs/service.js';
import { loadLifecycleFunctions, RunLifecycle } from './runs/index.js';
import { registerScheduleRoutes } from './schedules/http.js';
import { Scheduler } from './schedules/scheduler.js';
import { SchedulesService } from './schedules/service.js';
import { registerSecretRoutes } from './secrets/http.js';
import { SecretsService } from './secrets/service.js';
import { VERSION } from './version.js';
import type { EngineContext } from './execution/context.js';
import { Engine } from './execution/engine.js';
import { registerArtifactRoutes } from './artifacts/http.js';
import { registerScoreRoutes } from './scores/http.js';
import { ScoresService } from './scores/service.js';
import { ArtifactsService, DOWNLOAD_LINK_SECONDS } from './artifacts/service.js';
import { LocalBlobStore } from './platform/blobs/local.js';
import { S3BlobStore } from './platform/blobs/s3.js';
import type { Authenticator } from './platform/http/auth.js';
import { EngineWrites } from './execution/writes.js';
import { DatabaseLedger } from './execution/ledger.js';
import { configuredHarnesses } from './execution/harnesses/registry.js';
import type { Harness } from './execution/harnesses/harness.js';
import { eventReader, transcriptFormat } from './execution/harness-run.js';
import { allowRunUserToWorkspaces, resolveSandboxMode, runUserWarning } from './execution/sandbox/index.js';
import { TaskTokens } from './execution/task-token.js';
import { sandboxHiddenPaths, Workspaces } from './execution/workspace.js';
import { Bus } from './platform/bus.js';
import { UrlSigner } from './platform/signed-urls.js';
import { RunOutputs, TRANSCRIPT_LINK_SECONDS } from './runs/output.js';
import { registerRunOutputRoutes } from './runs/output-http.js';
import { HARNESS_TYPES } from './runs/schemas.js';
import { randomUUID } from 'node:crypto';
import { WorkerHub } from './workers/hub.js';
import { reportedSkills } from './workers/store.js';
import { registerWorkerRoutes } from './workers/http.js';
import { WorkerKeyAuthenticator } from './workers/keys/authenticate.js';
import { WorkerKeysService } from './workers/keys/service.js';
import { FactoriesService } from './factory/service.js';
import { registerDefinitionRoutes, registerFactoryRoutes } from './factory/http.js';
import { FactoryDefinitions } from './factory/apply.js';
import { teamSkills } from './factory/store.js';
import { WebhooksService } from './webhooks/service.js';
import { registerWebhookRoutes } from './webhooks/http.js';
import { registerIngressRoutes } from './webhooks/ingress.js';
import { ModelCatalogue } from './models/catalogue.js';
import { registerModelRoutes } from './models/http.js';
import { startWebhookRetention } from './webhooks/retention.js';
import { DELIVERIES_CHANNEL } from './webhooks/store.js';
import { AutomationsService } from './automations/service.js';
import { registerAutomationRoutes } from './automations/http.js';
import { AutomationEvaluator } from './automations/evaluator.js';

/** What a process does: serve the API, run the engine loops (scheduler, ...), or both. */
export type Role = 'api' | 'engine' | 'all';

export interface RunningServer {
  app: FastifyInstance;
  database: Database;
  /** Where the server listens, e.g. http://127.0.0.1:8080 */
  url: string;
  bootstrap: BootstrapResult;
  /** Present in engine processes. */
  scheduler: Scheduler | undefined;
  /** Present in engine processes with at least one harness. */
  engine: Engine | undefined;
  /** Present in engine processes: turns webhook deliveries into runs. */
  evaluator: AutomationEvaluator | undefined;
  services: {
    runs: RunsService;
    schedules: SchedulesService;
    environments: EnvironmentsService;
    skills: SkillsService;
    secrets: SecretsService;
    mcpServers: McpServersService;
  };
  stop(): Promise<void>;
}

/** Wires the slices together: database, migrations, first-start bootstrap, HTTP app, background loops. */
export async function startServer(
  config: Config,
  options: {
    logger?: boolean | object;
    role?: Role;
    now?: () => Date;
    /** Harnesses beyond the operator's command harnesses (in-process ones, e.g. for benchmarks). */
    harnesses?: Harness[];
  } = {},
): Promise<RunningServer> {
  const role = options.role ?? 'all';
  fs.mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  const database = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    poolSize: config.dbPoolSize,
  });
  const { db } = database;
  const migrations = loadMigrations();
  let bootstrap: BootstrapResult = {};
  let secretKey: Buffer;
  try {
    await migrate(
      db,
      async (locked) => {
        bootstrap = await bootstrapInstance(locked, config);
      },
      migrations,
      [loadLifecycleFunctions()],
    );
    secretKey = loadSecretKey(config.secretKey, config.dataDir);
    await checkSecretKey(db, secretKey, config.dataDir);
  } catch (error) {
    await database.close();
    throw error;
  }
  const cursors = new CursorCodec(await instanceSecret(db, 'cursor_signing_key', secretKey));
  // Without HANGAR_PUBLIC_URL, links follow the address the server ends up listening on (port 0 picks one).
  let publicUrl = config.publicUrl;
  const signer = new UrlSigner(
    await instanceSecret(db, 'download_signing_key', secretKey),
    () => publicUrl,
    Math.max(TRANSCRIPT_LINK_SECONDS, DOWNLOAD_LINK_SECONDS),
  );
  /** The API as harnesses and workers reach it. */
  const apiUrl = () => `${publicUrl}/api/v1`;
  const tokens = new TaskTokens(await instanceSecret(db, 'task_token_key', secretKey));
  const bus = await Bus.open(database);
  const sandbox = resolveSandboxMode(config.sandbox, { runAs: config.runUser, apiUrl });
  if (config.runUser) allowRunUserToWorkspaces(config);
  const hiddenPaths = sandboxHiddenPaths(config);
  const models = new ModelCatalogue(config.operator.catalogue, config.modelCredentials);
  const harnesses = configuredHarnesses(config, sandbox.mode, hiddenPaths, true);
  for (const harness of options.harnesses ?? []) harnesses.set(harness.name, harness);
  const limits = { global: config.maxConcurrentRuns, perTeam: config.maxConcurrentRunsPerTeam };
  const runActivity = new RunActivity(db);
  const environments = new EnvironmentsService({ db, runActivity });
  const skills = new SkillsService({
    environments,
    runActivity,
    workerSkills: (teamUid) => reportedSkills(db, teamUid),
    factorySkills: (teamUid, within) => teamSkills(within ?? db, teamUid),
    catalog: new SkillCatalog({
      git: new GitMirror({ baseUrl: config.gitBaseUrl, cacheDir: path.join(config.dataDir, 'git-cache') }),
      refreshSeconds: config.gitRefreshSeconds,
    }),
  });
  const secrets: SecretsService = new SecretsService({
    db,
    key: secretKey,
    roleInTeam,
    agentExists: async (teamUid, uid): Promise<boolean> => (await agents.findForRun(db, teamUid, uid)) !== undefined,
    environmentAccessible: (teamUid, environmentId) => environments.isAccessible(teamUid, environmentId),
  });
  const addressPolicy = new AddressPolicy(config.mcpAllowedHosts);
  const mcpServers = new McpServersService({ db, secrets, addressPolicy });
  const agents = new AgentsService({
    db,
    planMaxAgents: config.planMaxAgents,
    environmentAccessible: (teamUid, environmentId) => environments.isAccessible(teamUid, environmentId),
    missingSecrets: (teamUid, names) => secrets.missingSecrets(teamUid, names),
  });
  let engine: Engine | undefined;
  const lifecycle = new RunLifecycle(db);
  const runs = new RunsService({
    db,
    lifecycle,
    skills,
    environments,
    mcpServers,
    secrets,
    agents,
    cursors,
    publicUrl: config.publicUrl,
    metadataFiltering: config.metadataFiltering,
    limits,
    addressPolicy,
    harnessNames: () => [...new Set([...harnesses.keys(), ...HARNESS_TYPES])],
    modelRefusal: (modelId, harness, ownKey) => models.refusal(modelId, harness, ownKey),
    // This process's engine wakes at once; other replicas' through NOTIFY.
    onQueued: () => {
      engine?.poke();
      hub?.poke();
      bus.announceDispatch();
    },
  });
  const outputs = new RunOutputs({
    db,
    signer,
    harnessFormat: (name) => (harnesses.has(name) ? transcriptFormat(harnesses.get(name)!) : 'events'),
    eventReader: (name) => eventReader(name === null ? undefined : harnesses.get(name)),
  });
  const admin = new AdminService({ db });
  let scheduler: Scheduler | undefined;
  const schedules = new SchedulesService({ db, agents, now: options.now, onChange: () => scheduler?.poke() });

  const apiKeys = new ApiKeyAuthenticator(db, config.planMaxAgents);
  const throttle = new AuthFailureThrottle(db, config.authFailuresPerMinute);
  const authenticate: Authenticator = {
    principal: async (authorization, client) => {
      // A request without a key is not a guess; a wrong or malformed key is.
      if (authorization === undefined) return apiKeys.principal(authorization);
      throttle.refuseIfBlocked(client);
      try {
        return await apiKeys.principal(authorization);
      } catch (error) {
        if (error instanceof ApiError && error.status === 401) await throttle.failed(client);
        throw error;
      }
    },
    team: selectTeam,
  };
  const factories = new FactoriesService(db);
  const webhooks = new WebhooksService({ db, factories, secrets, key: secretKey, appUrl: () => publicUrl, cursors });
  const automations = new AutomationsService({
    db,
    factories,
    webhooks,
    agents,
    now: options.now,
    onSchedulesChanged: () => scheduler?.poke(),
  });
  const definitions = new FactoryDefinitions({
    db,
    webhooks,
    automations,
    agents,
    secrets,
    onApplied: () => scheduler?.poke(),
  });
  const blobs = config.s3 ? new S3BlobStore(config.s3) : new LocalBlobStore(path.join(config.dataDir, 'blobs'));
  const artifacts = new ArtifactsService({ db, lifecycle, blobs, signer, apiUrl });
  let hub: WorkerHub | undefined;
  const app = await buildApp({
    config,
    version: VERSION,
    logger: options.logger,
    authenticate,
    isReady: async () => {
      const applied = await appliedVersions(db);
      return migrations.every((migration) => applied.has(migration.version));
    },
    serveApi: role !== 'engine',
    registerRootRoutes: (root) =>
      registerIngressRoutes(root, {
        db,
        webhooks,
        ratePerMinute: config.webhookRatePerMinute,
        authFailuresPerMinute: config.webhookAuthFailuresPerMinute,
        publicUrl: config.publicUrl,
        announceDelivery: () => bus.announce(DELIVERIES_CHANNEL),
        now: options.now,
      }),
    registerApiRoutes: (api) => {
      registerRunRoutes(api, runs);
      registerRunOutputRoutes(api, { outputs, signer, db, bus });
      registerScoreRoutes(api, {
        scores: new ScoresService({ db, runs }),
        authenticate,
        verifyTaskToken: (token) => tokens.verify(token),
      });
      registerArtifactRoutes(api, {
        artifacts,
        signer,
        authenticate,
        verifyTaskToken: (token) => tokens.verify(token),
        maxUploadBytes: config.maxArtifactBytes,
      });
      registerScheduleRoutes(api, schedules);
      registerEnvironmentRoutes(api, environments);
      registerSkillRoutes(api, skills);
      registerSecretRoutes(api, secrets);
      registerMcpServerRoutes(api, mcpServers);
      registerEgressRoutes(api, {
        db,
        tokens,
        models: {
          catalogue: models,
          defaultHarness: config.operator.defaultHarness,
          readSecret: (teamUid, name) => secrets.readSecretValue(teamUid, name),
        },
        mcp: {
          resolve: (teamUid, uid) => mcpServers.resolveForRun(teamUid, uid),
          dispatcher: guardedDispatcher(addressPolicy),
        },
        bodyLimitBytes: config.bodyLimitBytes,
      });
      registerAgentRoutes(api, agents);
      registerModelRoutes(api, models);
      registerAdminRoutes(api, admin);
      registerFactoryRoutes(api, factories);
      registerDefinitionRoutes(api, definitions);
      registerWebhookRoutes(api, webhooks);
      registerAutomationRoutes(api, automations);
      hub = new WorkerHub({
        db,
        lifecycle,
        bus,
        log: api.log,
        environments,
        tokens,
        apiUrl,
        readSecret: (teamUid, name) => secrets.readSecretValue(teamUid, name),
        mcpServer: (teamUid, uid) => mcpServers.resolveForRun(teamUid, uid),
        leaseSeconds: config.runLeaseSeconds,
        heartbeatSeconds: config.workerHeartbeatSeconds,
      });
      const workerHub = hub;
      registerWorkerRoutes(api, {
        hub,
        db,
        heartbeatSeconds: config.workerHeartbeatSeconds,
        workerKeys: new WorkerKeyAuthenticator(db, authenticate),
        keys: new WorkerKeysService({ db, onRevoked: (keyUid) => workerHub.closeKey(keyUid) }),
      });
    },
  });
  let evaluator: AutomationEvaluator | undefined;
  let stopRetention: (() => void) | undefined;
  if (role !== 'api') {
    scheduler = new Scheduler({ db, runs, log: app.log, now: options.now });
    evaluator = new AutomationEvaluator({ database, runs, log: app.log });
    stopRetention = startWebhookRetention(db, app.log);
    if (sandbox.warning) app.log.warn(sandbox.warning);
    const asRoot = runUserWarning(config.runUser);
    if (asRoot) app.log.warn(asRoot);
    if (!canExecute(config, models, options.harnesses)) {
      app.log.warn(
        'no model has credentials and no harness is configured (HANGAR_CONFIG), so runs stay QUEUED; see the README on harnesses and models',
      );
    } else {
      const engineId = `engine-${randomUUID()}`;
      const context: EngineContext = {
        lifecycle,
        engineId,
        ledger: new DatabaseLedger({
          db,
          lifecycle,
          engineId,
          writes: new EngineWrites(lifecycle, engineId),
          environments,
          tokens,
          apiUrl,
          artifacts,
          maxArtifactBytes: config.maxArtifactBytes,
          readSecret: (teamUid, name) => secrets.readSecretValue(teamUid, name),
          mcpServer: (teamUid, uid) => mcpServers.resolveForRun(teamUid, uid),
        }),
        log: app.log,
        workspaces: Workspaces.fromConfig(config, sandbox.mode, hiddenPaths),
        harnesses,
        defaultHarness: config.operator.defaultHarness,
        models,
        sandbox: sandbox.mode,
        price: (modelId, input, output) => models.cost(modelId, input, output),
      };
      // Only the embedded database guarantees one process per data directory; replicas may share one.
      engine = new Engine({
        context,
        bus,
        limits,
        leaseSeconds: config.runLeaseSeconds,
        cleanWorkspacesAtStart: database.kind === 'pglite',
      });
    }
  }

  let vacuumTimer: NodeJS.Timeout | undefined;
  if (database.kind === 'pglite') {
    // PGlite never autovacuums; without this, dead tuples from updates pile up forever.
    vacuumTimer = setInterval(() => {
      sql`VACUUM (ANALYZE)`.execute(db).catch((error) => app.log.warn({ err: error }, 'vacuum failed'));
    }, config.vacuumIntervalSeconds * 1000);
    vacuumTimer.unref();
  }

  try {
    await app.listen({ port: config.port, host: config.host });
  } catch (error) {
    await app.close();
    await database.close();
    throw error;
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  if (!config.publicUrlExplicit) publicUrl = `http://${host}:${port}`;
  scheduler?.start();
  await evaluator?.start();
  await engine?.start();
  await hub?.start();

  let stopping: Promise<void> | undefined;
  return {
    app,
    database,
    url: `http://${host}:${port}`,
    bootstrap,
    scheduler,
    engine,
    evaluator,
    services: { runs, schedules, environments, skills, secrets, mcpServers },
    stop: () =>
      (stopping ??= (async () => {
        if (vacuumTimer) clearInterval(vacuumTimer);
        stopRetention?.();
        await scheduler?.stop();
        await evaluator?.stop();
        await engine?.stop();
        await hub?.stop();
        await app.close();
        await bus.close();
        blobs.close();
        await database.close();
      })()),
  };
}

/**
 * Whether anything here could execute a run: a harness of the operator's (or the caller's), a catalogue model with
 * credentials for the built-in agent, or built-in harnesses the operator set up (teams may bring their own keys).
 * Without any, the engine does not start and runs wait in QUEUED for an operator to configure one.
 */
function canExecute(config: Config, models: ModelCatalogue, extra: Harness[] | undefined): boolean {
  if (config.operator.harnesses.size > 0 || config.operator.builtInConfigured || (extra?.length ?? 0) > 0) return true;
  return models.models.some((model) => models.availability(model).usable);
}
