import type { FastifyInstance } from 'fastify';
import { auditSettingsChanges } from '../audit/index.js';
import type { AutomationEvaluator } from '../automations/index.js';
import type { Config } from '../config.js';
import type { Engine, Harness } from '../execution/index.js';
import { placeWorkspaces } from '../execution/index.js';
import type { BootstrapResult } from '../identities/index.js';
import type { Database } from '../platform/db/connect.js';
import { startSpawner, stopSpawner } from '../platform/spawn/index.js';
import { flushTracing, startTracing } from '../platform/tracing.js';
import type { Scheduler } from '../schedules/index.js';
import { VERSION } from '../version.js';
import { closing, StartedComponents } from './components.js';
import { Http } from './http.js';
import { Loops, type Role } from './loops.js';
import { MetricsEndpoint } from './metrics.js';
import { openPlatform } from './platform.js';
import { isAddressInUse, PortInUseError, reservePort } from './port.js';
import { buildServices, type Services } from './services.js';

export type { Role } from './loops.js';

export interface ServerOptions {
  /** `false`: silent; an object: pino options; by default the configured level with credentials redacted. */
  logger?: boolean | object;
  role?: Role;
  now?: () => Date;
  /** Harnesses beyond the operator's command harnesses (in-process ones, e.g. for benchmarks). */
  harnesses?: Harness[];
}

export interface RunningServer {
  app: FastifyInstance;
  /** The configuration the server runs with: as given, but with workspaces its run user can reach (placeWorkspaces). */
  config: Config;
  database: Database;
  /** Where the server listens, e.g. http://127.0.0.1:8080 */
  url: string;
  /** Where HANGAR_METRICS_PORT's /metrics listens; undefined without one. */
  metricsUrl: string | undefined;
  bootstrap: BootstrapResult;
  /** Present in engine processes. */
  scheduler: Scheduler | undefined;
  /** Present in engine processes with at least one harness. */
  engine: Engine | undefined;
  /** Present in engine processes: turns webhook deliveries into runs. */
  evaluator: AutomationEvaluator | undefined;
  services: Pick<Services, 'runs' | 'schedules' | 'environments' | 'skills' | 'secrets' | 'mcpServers'>;
  stop(): Promise<void>;
}

/**
 * Assembles a server: the platform (database, keys, bus), the slices' services, the HTTP app and the background
 * loops. The HTTP app listens before the loops start, and the loops stop before it closes; the platform closes last.
 */
export async function startServer(configured: Config, options: ServerOptions = {}): Promise<RunningServer> {
  const role = options.role ?? 'all';
  // First, while this process is small: every process the server starts is forked by the spawner (issue 54).
  startSpawner();
  // Workspaces the run user can reach, or a refusal that names the directory in its way (issue 48).
  const config = placeWorkspaces(configured);
  // Taken before the database opens (a first start creates it for half a minute): a busy port is said at once.
  const port = await reservePort(config.host, config.port).catch(async (error) => {
    await stopSpawner();
    throw error;
  });
  if (config.tracing) await startTracing(VERSION);
  const platform = await openPlatform(config, options).catch(async (error) => {
    await port.release();
    await stopSpawner();
    throw error;
  });
  const started = new StartedComponents();
  try {
    await started.start(closing(() => stopSpawner()));
    // Stopped last: the spans of the shutdown are sent too.
    await started.start(closing(() => flushTracing()));
    await started.start(closing(() => platform.close()));
    // Instance settings change outside the API (environment, operator file): audited when a server starts.
    await auditSettingsChanges(platform.db, { ...config }, platform.secretKey);
    const services = buildServices(platform, { ...options, role });
    const loops = new Loops(platform, services, { role, now: options.now, harnesses: options.harnesses });
    // API processes hold the workers' connections: the hub exists exactly when the API is served.
    // Ready once every loop has started: the engine's start removes what a crash left (its overlays unmounted),
    // and nothing may rely on the server before that (issue 48).
    let loopsStarted = false;
    const http = await Http.build(platform, services, {
      api: loops.hub && { hub: loops.hub },
      now: options.now,
      isReady: async () => loopsStarted && (await platform.isMigrated()),
    });
    const metrics = new MetricsEndpoint(platform);
    metrics.register(http.app);
    await started.start(metrics);
    await port.release();
    await started.start(http).catch((error) => {
      // Taken by another process in the moment between the release and the listen.
      throw isAddressInUse(error) ? new PortInUseError(config.host, config.port) : error;
    });
    await started.start(loops);
    loopsStarted = true;
    let stopping: Promise<void> | undefined;
    return {
      app: http.app,
      config,
      database: platform.database,
      url: http.url,
      metricsUrl: metrics.url,
      bootstrap: platform.bootstrap,
      scheduler: loops.scheduler,
      engine: loops.engine,
      evaluator: loops.evaluator,
      services,
      stop: () => {
        // Not ready any more from the first moment of the stop.
        loopsStarted = false;
        stopping ??= started.stop();
        return stopping;
      },
    };
  } catch (error) {
    await port.release();
    await started.stop().catch(() => undefined);
    throw error;
  }
}
