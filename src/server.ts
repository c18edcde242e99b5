import fs from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import type { Config } from './config.js';
import { authenticate } from './identities/authenticate.js';
import { bootstrapInstance, type BootstrapResult } from './identities/bootstrap.js';
import { openDatabase, type Database } from './platform/db/connect.js';
import { appliedVersions, loadMigrations, migrate } from './platform/db/migrate.js';
import { buildApp } from './platform/http/app.js';
import { CursorCodec } from './platform/http/pagination.js';
import { instanceSecret } from './platform/settings.js';
import { registerRunRoutes } from './runs/http.js';
import { RunsService } from './runs/service.js';
import { registerScheduleRoutes } from './schedules/http.js';
import { Scheduler } from './schedules/scheduler.js';
import { SchedulesService } from './schedules/service.js';
import { VERSION } from './version.js';

/** What a process does: serve the API, run the engine loops (scheduler, ...), or both. */
export type Role = 'api' | 'engine' | 'all';
export const ROLES: readonly Role[] = ['api', 'engine', 'all'];

export interface RunningServer {
  app: FastifyInstance;
  database: Database;
  /** Where the server listens, e.g. http://127.0.0.1:8080 */
  url: string;
  bootstrap: BootstrapResult;
  /** Present in engine processes. */
  scheduler: Scheduler | undefined;
  services: { runs: RunsService; schedules: SchedulesService };
  stop(): Promise<void>;
}

/** Wires the slices together: database, migrations, first-start bootstrap, HTTP app, background loops. */
export async function startServer(
  config: Config,
  options: { logger?: boolean | object; role?: Role; now?: () => Date } = {},
): Promise<RunningServer> {
  const role = options.role ?? 'all';
  fs.mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: config.dbPoolSize });
  const { db } = database;
  const migrations = loadMigrations();
  let bootstrap: BootstrapResult = {};
  try {
    await migrate(db, async (locked) => {
      bootstrap = await bootstrapInstance(locked, config);
    }, migrations);
  } catch (error) {
    await database.close();
    throw error;
  }
  const cursors = new CursorCodec(await instanceSecret(db, 'cursor_signing_key'));
  const runs = new RunsService({ db, cursors, publicUrl: config.publicUrl, metadataFiltering: config.metadataFiltering });
  let scheduler: Scheduler | undefined;
  const schedules = new SchedulesService({ db, now: options.now, onChange: () => scheduler?.poke() });

  const app = await buildApp({
    config,
    version: VERSION,
    logger: options.logger,
    authenticate: (authorization, team) => authenticate(db, authorization, team),
    isReady: async () => {
      const applied = await appliedVersions(db);
      return migrations.every((migration) => applied.has(migration.version));
    },
    serveApi: role !== 'engine',
    registerApiRoutes: (api) => {
      registerRunRoutes(api, runs);
      registerScheduleRoutes(api, schedules);
    },
  });
  if (role !== 'api') {
    scheduler = new Scheduler({ db, runs, log: app.log, now: options.now });
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
  scheduler?.start();
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;

  let stopping: Promise<void> | undefined;
  return {
    app,
    database,
    url: `http://${host}:${port}`,
    bootstrap,
    scheduler,
    services: { runs, schedules },
    stop: () =>
      (stopping ??= (async () => {
        if (vacuumTimer) clearInterval(vacuumTimer);
        await scheduler?.stop();
        await app.close();
        await database.close();
      })()),
  };
}
