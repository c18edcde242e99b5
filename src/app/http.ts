import type { FastifyInstance } from 'fastify';
import { registerArtifactRoutes } from '../artifacts/index.js';
import { recordAuditedRoutes, registerAuditRoutes } from '../audit/index.js';
import { registerAutomationRoutes } from '../automations/index.js';
import { registerBudgetRoutes } from '../budgets/index.js';
import { registerEgressRoutes } from '../egress/index.js';
import { registerEnvironmentRoutes, registerSkillRoutes } from '../environments/index.js';
import { registerDefinitionRoutes, registerFactoryRoutes, registerPublicFactoryRoutes } from '../factory/index.js';
import { registerGitCredentialRoute, registerGitHubRoutes } from '../github/index.js';
import { registerAdminRoutes, registerAgentRoutes } from '../identities/index.js';
import { registerMcpServerRoutes } from '../mcp/index.js';
import { registerMessageRoutes } from '../messages/index.js';
import { registerModelRoutes } from '../models/index.js';
import { registerOverviewRoutes } from '../overview/index.js';
import { buildApp } from '../platform/http/app.js';
import { guardedDispatcher } from '../platform/net/guarded-fetch.js';
import { registerRunnerRoutes } from '../runners/index.js';
import {
  registerHandoffRoutes,
  registerRedirectRoutes,
  registerRunOutputRoutes,
  registerRunRoutes,
  registerShareRoutes,
} from '../runs/index.js';
import { registerScheduleRoutes } from '../schedules/index.js';
import { registerScoreRoutes } from '../scores/index.js';
import { registerSecretRoutes } from '../secrets/index.js';
import { VERSION } from '../version.js';
import { DELIVERIES_CHANNEL, registerIngressRoutes, registerWebhookRoutes } from '../webhooks/index.js';
import type { WorkerHub } from '../workers/index.js';
import { registerWorkerRoutes, WorkerKeyAuthenticator, WorkerKeysService } from '../workers/index.js';
import type { Component } from './components.js';
import { registerGitHubTriggers } from './github-triggers.js';
import type { Platform } from './platform.js';
import type { Services } from './services.js';
import { registerStatusRoute } from './status-http.js';

/**
 * The HTTP side: the Fastify app with every slice's routes, listening. Processes without the API (role engine)
 * answer health checks only. Once it listens, links follow its address unless HANGAR_PUBLIC_URL is set.
 */
export class Http implements Component {
  private constructor(
    readonly app: FastifyInstance,
    private readonly platform: Platform,
  ) {}

  /** Builds the app; `api`: the process serves the API, and its worker hub takes the workers' connections. */
  static async build(
    platform: Platform,
    services: Services,
    options: {
      api: { hub: WorkerHub } | undefined;
      now?: () => Date;
      /** Whether the server is ready (/readyz); by default once the migrations are applied. */
      isReady?: () => Promise<boolean>;
    },
  ): Promise<Http> {
    const { api } = options;
    const { config } = platform;
    const app = await buildApp({
      config,
      version: VERSION,
      logger: platform.log,
      authenticate: services.authenticate,
      isReady: options.isReady ?? platform.isMigrated,
      serveApi: api !== undefined,
      registerRootRoutes: async (root) => {
        await registerGitHubTriggers(root, platform, services);
        await registerIngressRoutes(root, {
          db: platform.db,
          webhooks: services.webhooks,
          ratePerMinute: config.webhookRatePerMinute,
          authFailuresPerMinute: config.webhookAuthFailuresPerMinute,
          publicUrl: config.publicUrl,
          announceDelivery: () => platform.bus.announce(DELIVERIES_CHANNEL),
          now: options.now,
        });
      },
      registerApiRoutes: (routes) => api && registerApiRoutes(routes, platform, services, api.hub),
    });
    platform.activity.track(app.server);
    return new Http(app, platform);
  }

  /** The address the server listens on, e.g. http://127.0.0.1:8080 (known once started). */
  get url(): string {
    const address = this.app.server.address();
    const { config } = this.platform;
    const port = typeof address === 'object' && address ? address.port : config.port;
    const host = config.host.includes(':') ? `[${config.host}]` : config.host;
    return `http://${host}:${port}`;
  }

  async start(): Promise<void> {
    try {
      await this.app.listen({ port: this.platform.config.port, host: this.platform.config.host });
    } catch (error) {
      await this.app.close();
      throw error;
    }
    this.platform.address.listening(this.url);
  }

  async stop(): Promise<void> {
    await this.app.close();
  }
}

function registerApiRoutes(api: FastifyInstance, platform: Platform, services: Services, hub: WorkerHub): void {
  const { config, db, bus, signer, tokens } = platform;
  const { authenticate, secrets, mcpServers } = services;
  const verifyTaskToken = (token: string) => tokens.verify(token);
  recordAuditedRoutes(api, services.audit);
  registerAuditRoutes(api, services.audit);
  registerBudgetRoutes(api, services.budgets);
  registerGitHubRoutes(api, services.github);
  registerGitCredentialRoute(api, { access: services.runGitHub, verifyTaskToken });
  registerRunRoutes(api, services.runs);
  registerRunOutputRoutes(api, { outputs: services.outputs, signer, db, bus });
  registerHandoffRoutes(api, { db, signer });
  registerRedirectRoutes(api, { db, authenticate, throttle: services.authThrottle });
  registerShareRoutes(api, services.sharing);
  registerScoreRoutes(api, { scores: services.scores, authenticate, verifyTaskToken });
  registerMessageRoutes(api, { messages: services.messages, authenticate, verifyTaskToken });
  registerArtifactRoutes(api, {
    artifacts: services.artifacts,
    signer,
    authenticate,
    verifyTaskToken,
    maxUploadBytes: config.maxArtifactBytes,
  });
  registerScheduleRoutes(api, services.schedules);
  registerEnvironmentRoutes(api, services.environments);
  registerSkillRoutes(api, services.skills);
  registerSecretRoutes(api, secrets);
  registerMcpServerRoutes(api, mcpServers);
  registerRunnerRoutes(api, services.runners);
  registerEgressRoutes(api, {
    db,
    tokens,
    models: {
      catalogue: services.models,
      defaultHarness: config.operator.defaultHarness,
      readSecret: (teamUid, name) => secrets.readSecretValue(teamUid, name),
      teamBudget: async (teamUid) => {
        const spend = await services.budgets.spend(teamUid);
        return spend.monthly_budget_usd === null
          ? null
          : { limit: spend.monthly_budget_usd, spent: spend.month_spend_usd };
      },
    },
    mcp: {
      resolve: (teamUid, uid) => mcpServers.resolveForRun(teamUid, uid),
      dispatcher: guardedDispatcher(services.addressPolicy),
    },
    bodyLimitBytes: config.bodyLimitBytes,
  });
  registerAgentRoutes(api, services.agents);
  registerModelRoutes(api, services.models);
  registerAdminRoutes(api, services.admin);
  registerStatusRoute(api, config, () => platform.address.url);
  registerFactoryRoutes(api, services.factories);
  registerPublicFactoryRoutes(api, services.factoryDispatch);
  registerDefinitionRoutes(api, services.definitions);
  registerWebhookRoutes(api, services.webhooks);
  registerAutomationRoutes(api, services.automations);
  registerOverviewRoutes(api, services.overview);
  registerWorkerRoutes(api, {
    hub,
    db,
    heartbeatSeconds: config.workerHeartbeatSeconds,
    workerKeys: new WorkerKeyAuthenticator(db, authenticate),
    keys: new WorkerKeysService({ db, onRevoked: (keyUid) => hub.closeKey(keyUid) }),
    executionCredential: (token) => platform.executionCredentials.verify(token),
  });
}
