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
import { VERSION } from './version.js';

export interface RunningServer {
  app: FastifyInstance;
  database: Database;
  /** Where the server listens, e.g. http://127.0.0.1:8080 */
  url: string;
  bootstrap: BootstrapResult;
  stop(): Promise<void>;
}

/** Wires the slices together: database, migrations, first-start bootstrap, HTTP app, background loops. */
export async function startServer(config: Config, options: { logger?: boolean | object } = {}): Promise<RunningServer> {
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

  const app = await buildApp({
    config,
    version: VERSION,
    logger: options.logger,
    authenticate: (authorization, team) => authenticate(db, authorization, team),
    isReady: async () => {
      const applied = await appliedVersions(db);
      return migrations.every((migration) => applied.has(migration.version));
    },
    registerApiRoutes: (api) => registerRunRoutes(api, runs),
  });

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

  let stopping: Promise<void> | undefined;
  return {
    app,
    database,
    url: `http://${host}:${port}`,
    bootstrap,
    stop: () =>
      (stopping ??= (async () => {
        if (vacuumTimer) clearInterval(vacuumTimer);
        await app.close();
        await database.close();
      })()),
  };
}
