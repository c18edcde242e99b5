import fs from 'node:fs';
import path from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import { DOWNLOAD_LINK_SECONDS } from '../artifacts/index.js';
import type { Config } from '../config.js';
import { ExecutionCredentials, TaskTokens } from '../execution/index.js';
import { type BootstrapResult, bootstrapInstance } from '../identities/index.js';
import { LocalBlobStore } from '../platform/blobs/local.js';
import type { BlobStore } from '../platform/blobs/store.js';
import { Bus } from '../platform/bus.js';
import { type Database, openDatabase } from '../platform/db/connect.js';
import { appliedVersions, loadMigrations, migrate } from '../platform/db/migrate.js';
import { RequestActivity } from '../platform/http/activity.js';
import { CursorCodec } from '../platform/http/pagination.js';
import { createLogger } from '../platform/logger.js';
import { setStandingRedactor } from '../platform/redaction/active.js';
import { Redactor } from '../platform/redaction/redactor.js';
import { checkSecretKey, loadSecretKey } from '../platform/secret-key.js';
import { instanceSecret } from '../platform/settings.js';
import { UrlSigner } from '../platform/signed-urls.js';
import { loadLifecycleFunctions, TRANSCRIPT_LINK_SECONDS } from '../runs/index.js';

/**
 * Where harnesses, workers and signed links reach this server: HANGAR_PUBLIC_URL, or else the address it listens on,
 * known once it listens (port 0 picks one).
 */
export class PublicAddress {
  constructor(
    private current: string,
    private readonly explicit: boolean,
  ) {}

  get url(): string {
    return this.current;
  }

  /** The API as harnesses and workers reach it. */
  readonly apiUrl = (): string => `${this.current}/api/v1`;

  listening(url: string): void {
    if (!this.explicit) this.current = url;
  }
}

/** What every slice stands on: the migrated database, the instance's keys, the bus, blob storage, the logger. */
export interface Platform {
  config: Config;
  log: FastifyBaseLogger;
  database: Database;
  db: Database['db'];
  /** The first start's outcome (a generated admin key); empty on later starts. */
  bootstrap: BootstrapResult;
  /** Whether every migration this build knows has been applied (the readiness check). */
  isMigrated: () => Promise<boolean>;
  secretKey: Buffer;
  cursors: CursorCodec;
  signer: UrlSigner;
  tokens: TaskTokens;
  /** Run pods' credentials (HANGAR_SANDBOX=kubernetes): each opens the worker websocket for one execution. */
  executionCredentials: ExecutionCredentials;
  bus: Bus;
  blobs: BlobStore;
  address: PublicAddress;
  /** The HTTP requests in flight (the background chores of PGlite wait for a quiet moment). */
  activity: RequestActivity;
  /** Closes the bus, the blob store and the database: the last thing a server does. */
  close(): Promise<void>;
}

/** Opens the database, migrates it (bootstrapping a new instance under the migration lock) and loads the keys. */
export async function openPlatform(config: Config, options: { logger?: boolean | object }): Promise<Platform> {
  fs.mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  const database = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    poolSize: config.dbPoolSize,
    pgliteSharedBuffersMb: config.pgliteSharedBuffersMb,
  });
  try {
    return await onDatabase(config, options, database);
  } catch (error) {
    await database.close();
    throw error;
  }
}

async function onDatabase(
  config: Config,
  options: { logger?: boolean | object },
  database: Database,
): Promise<Platform> {
  const { db } = database;
  const migrations = loadMigrations();
  let bootstrap: BootstrapResult = {};
  await migrate(
    db,
    async (locked) => {
      bootstrap = await bootstrapInstance(locked, config);
    },
    migrations,
    [loadLifecycleFunctions()],
  );
  const secretKey = loadSecretKey(config.secretKey, config.dataDir);
  await checkSecretKey(db, secretKey, config.dataDir);
  const address = new PublicAddress(config.publicUrl, config.publicUrlExplicit);
  const cursors = new CursorCodec(await instanceSecret(db, 'cursor_signing_key', secretKey));
  const signer = new UrlSigner(
    await instanceSecret(db, 'download_signing_key', secretKey),
    () => address.url,
    Math.max(TRANSCRIPT_LINK_SECONDS, DOWNLOAD_LINK_SECONDS),
  );
  const tokens = new TaskTokens(await instanceSecret(db, 'task_token_key', secretKey));
  const executionCredentials = new ExecutionCredentials(
    await instanceSecret(db, 'execution_credential_key', secretKey),
  );
  const bus = await Bus.open(database);
  // The operator's provider keys never reach a log line, whatever writes it.
  setStandingRedactor(new Redactor().addAll(config.modelCredentials));
  // The AWS SDK is loaded only where S3 is configured (about 20 MB otherwise carried idle).
  const blobs = config.s3
    ? new (await import('../platform/blobs/s3.js')).S3BlobStore(config.s3)
    : new LocalBlobStore(path.join(config.dataDir, 'blobs'));
  return {
    config,
    log: createLogger(config.logLevel, options.logger, config.logFormat),
    database,
    db,
    bootstrap,
    isMigrated: async () => {
      const applied = await appliedVersions(db);
      return migrations.every((migration) => applied.has(migration.version));
    },
    secretKey,
    cursors,
    signer,
    tokens,
    executionCredentials,
    bus,
    blobs,
    address,
    activity: new RequestActivity(),
    close: async () => {
      await bus.close();
      blobs.close();
      await database.close();
    },
  };
}
