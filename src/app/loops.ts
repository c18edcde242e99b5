import { randomUUID } from 'node:crypto';
import { auditRetention } from '../audit/index.js';
import { AutomationEvaluator } from '../automations/index.js';
import type { DB } from '../database.js';
import type { Harness } from '../execution/index.js';
import {
  DatabaseLedger,
  Engine,
  EnginePresence,
  EngineWrites,
  type KubernetesEngine,
  kubernetesEngineFor,
  runUserWarning,
  Workspaces,
  warmStartsFor,
  workspacesInUse,
} from '../execution/index.js';
import { threadReplyLoop } from '../github/index.js';
import { EgressProxy } from '../network/index.js';
import { PgliteUpkeep } from '../platform/db/pglite-upkeep.js';
import { PollingLoop } from '../platform/loop.js';
import { idempotencyKeyRetention, overviewFold, PGLITE_BATCH_MS, runRetention } from '../runs/index.js';
import { Scheduler } from '../schedules/index.js';
import { webhookRetention } from '../webhooks/index.js';
import { WorkerHub } from '../workers/index.js';
import { type Component, StartedComponents } from './components.js';
import type { Platform } from './platform.js';
import { canExecute, NO_HARNESS_HINT } from './readiness.js';
import type { Services } from './services.js';
import { unreachableHarnessFiles } from './status.js';

/** What a process does: serve the API, run the engine loops (scheduler, ...), or both. */
export type Role = 'api' | 'engine' | 'all';

/**
 * The background loops of one process, by role. API processes hold worker connections (the hub); engine processes
 * run the scheduler, the automation evaluator, webhook retention and, when anything could execute a run, the
 * engine. They start consumers first (hub, engine) and producers last (evaluator, scheduler), so they stop
 * producers first.
 */
export class Loops implements Component {
  /** Present in API processes: the worker connections. */
  readonly hub: WorkerHub | undefined;
  /** Present in engine processes with at least one harness. */
  readonly engine: Engine | undefined;
  /** Instead of the engine under HANGAR_SANDBOX=kubernetes: each execution a Job (execution/kubernetes/). */
  readonly kubernetes: KubernetesEngine | undefined;
  /** Present in engine processes: turns webhook deliveries into runs. */
  readonly evaluator: AutomationEvaluator | undefined;
  /** Present in engine processes. */
  readonly scheduler: Scheduler | undefined;
  private readonly chores: Component[] = [];
  private readonly started = new StartedComponents();

  constructor(
    private readonly platform: Platform,
    private readonly services: Services,
    options: { role: Role; now?: () => Date; harnesses?: Harness[] },
  ) {
    const { config, database, log, bus } = platform;
    const upkeep = database.kind === 'pglite' ? pgliteUpkeep(platform) : undefined;
    if (upkeep) this.chores.push(...vacuum(platform, upkeep));
    if (options.role !== 'engine') {
      this.hub = new WorkerHub({
        ...services.runSetup,
        github: services.runGitHub,
        githubApiUrl: config.githubApiUrl,
        bus,
        log,
        leaseSeconds: config.runLeaseSeconds,
        heartbeatSeconds: config.workerHeartbeatSeconds,
      });
    }
    if (options.role === 'api') return;
    this.chores.push(webhookRetention(database.db, log), idempotencyKeyRetention(database.db, log));
    this.chores.push(overviewFold(database.db, log, config.overviewFoldSeconds * 1000));
    if (config.githubApp) this.chores.push(threadReplyLoop(() => services.github.tellOutcomes(), log));
    this.chores.push(auditRetention(database.db, log, config.auditRetentionDays, { now: options.now }));
    if (config.runRetentionDays !== undefined)
      this.chores.push(
        runRetention({
          lifecycle: services.runSetup.lifecycle,
          blobs: platform.blobs,
          days: config.runRetentionDays,
          log,
          now: options.now,
          // PGlite's one connection serves the API between batches: short ones, with pauses as long, each
          // started at a quiet moment of the API.
          ...(database.kind === 'pglite' ? { targetBatchMs: PGLITE_BATCH_MS, whenQuiet: quiet(platform) } : {}),
          // PGlite has no autovacuum: the deleted rows' space is made reusable at once, a table at a time (the
          // heap; the indexes when the API is idle, see PgliteUpkeep).
          afterDeleting: async () => {
            await upkeep?.vacuum();
          },
        }),
      );
    this.scheduler = new Scheduler({ db: database.db, runs: services.runs, log, now: options.now });
    this.evaluator = new AutomationEvaluator({ database, runs: services.runs, log });
    const { sandbox, models } = services.execution;
    if (sandbox.warning) log.warn(sandbox.warning);
    const asRoot = runUserWarning(config.runUser);
    if (asRoot) log.warn(asRoot);
    for (const problem of unreachableHarnessFiles(config, sandbox.mode.capabilities.copiesUnreachableFiles))
      log.warn(`WARNING: ${problem}`);
    if (canExecute(config, models, options.harnesses) && sandbox.runsInJobs)
      this.kubernetes = this.buildKubernetesEngine();
    else if (canExecute(config, models, options.harnesses)) this.engine = this.buildEngine();
    else
      log.warn(
        `no model has credentials and no harness is configured (HANGAR_CONFIG), so runs stay QUEUED. ${NO_HARNESS_HINT} See docs/harnesses.md and docs/models.md.`,
      );
  }

  async start(): Promise<void> {
    const { bus } = this.platform;
    const scheduler = this.scheduler;
    if (scheduler) bus.onSchedulesChanged(() => scheduler.poke());
    const loops = [this.hub, this.engine, this.kubernetes, this.evaluator, scheduler].filter(
      (loop) => loop !== undefined,
    );
    await this.started.startAll([...this.chores, ...loops]);
  }

  stop(): Promise<void> {
    return this.started.stop();
  }

  private buildKubernetesEngine(): KubernetesEngine {
    const { config, database, log, bus } = this.platform;
    const { runSetup } = this.services;
    const engineId = `engine-${randomUUID()}`;
    return kubernetesEngineFor(config, {
      ...runSetup,
      bus,
      log,
      limits: this.services.execution.limits,
      credentials: this.platform.executionCredentials,
      publicUrl: () => this.platform.address.url,
      presence: new EnginePresence({ db: database.db, engineId, databaseUrl: config.databaseUrl, log }),
      ...(database.kind === 'pglite' ? { soleEngine: engineId } : {}),
    });
  }

  private buildEngine(): Engine {
    const { config, database, log, bus } = this.platform;
    const { runSetup, artifacts } = this.services;
    const { harnesses, models, sandbox, hiddenPaths, limits } = this.services.execution;
    const engineId = `engine-${randomUUID()}`;
    const workspaces = Workspaces.fromConfig(config, sandbox.mode, hiddenPaths);
    return new Engine({
      context: {
        lifecycle: runSetup.lifecycle,
        engineId,
        ledger: new DatabaseLedger({
          ...runSetup,
          engineId,
          // Twice the lease: a write still lands when the database comes back just after the lease ran out
          // (the run is only taken back once a reaper can reach the database too).
          writes: new EngineWrites(runSetup.lifecycle, engineId, {
            retryForMs: 2 * config.runLeaseSeconds * 1000,
            onRetry: (error) => log.warn({ err: error }, 'database unavailable: retrying a run write'),
          }),
          artifacts,
          maxArtifactBytes: config.maxArtifactBytes,
        }),
        log,
        workspaces,
        warm: warmStartsFor(config, database.db, sandbox.mode, workspaces, (error, message) =>
          log.warn({ err: error }, message),
        ),
        harnesses,
        defaultHarness: config.operator.defaultHarness,
        models,
        sandbox: sandbox.mode,
        // An environment's allow list goes through the egress proxy, a process of its own forked on first use.
        ...(sandbox.mode.capabilities.egressProxy ? { egress: new EgressProxy(config.egress) } : {}),
        price: (modelId, input, output) => models.cost(modelId, input, output),
        defaultMaxCostUsd: this.platform.config.runDefaultMaxCostUsd,
        github: this.services.runGitHub,
      },
      bus,
      limits,
      leaseSeconds: config.runLeaseSeconds,
      presence: new EnginePresence({ db: database.db, engineId, databaseUrl: config.databaseUrl, log }),
      // Only the embedded database guarantees one process per data directory; replicas may share one.
      cleanWorkspacesAtStart: database.kind === 'pglite',
      soleEngine: database.kind === 'pglite',
      workspacesInUse: (executions) => workspacesInUse(database.db, executions),
    });
  }
}

/** The longest a PGlite chore waits for the API to have no request in flight before it goes ahead anyway. */
const QUIET_WAIT_MS = 1000;

/** A quiet moment of the API, or QUIET_WAIT_MS, whichever comes first (see RequestActivity). */
function quiet(platform: Platform): () => Promise<void> {
  return () => platform.activity.quiet(QUIET_WAIT_MS);
}

function pgliteUpkeep(platform: Platform): PgliteUpkeep<DB> {
  return new PgliteUpkeep(platform.database.db, {
    idleMs: () => platform.activity.idleMs,
    whenQuiet: quiet(platform),
  });
}

/** How often PGlite's index passes left waiting look for an idle API (no query when none is waiting). */
const INDEX_CLEANUP_CHECK_MS = 60_000;

/**
 * PGlite never autovacuums; without this, dead tuples from updates pile up forever. Autovacuum's rules, a table
 * and a statement at a time, heap first and indexes when the API is idle (src/platform/db/pglite-upkeep.ts), so
 * the API is served between them.
 */
function vacuum(platform: Platform, upkeep: PgliteUpkeep<DB>): PollingLoop[] {
  const { config, log } = platform;
  const onError = (error: unknown) => log.warn({ err: error }, 'vacuum failed');
  return [
    new PollingLoop({
      intervalMs: config.vacuumIntervalSeconds * 1000,
      waitFirst: true,
      pass: async () => {
        await upkeep.vacuum();
      },
      onError,
    }),
    new PollingLoop({
      intervalMs: INDEX_CLEANUP_CHECK_MS,
      waitFirst: true,
      pass: async () => {
        await upkeep.cleanIndexesIfDue();
      },
      onError,
    }),
  ];
}
