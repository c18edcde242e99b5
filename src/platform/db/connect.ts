import fs from 'node:fs';
import path from 'node:path';
import { createPgConfig } from '@electric-sql/pglite/node-postgres';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { DB } from '../../database.js';
import { PostgresListener } from './listener.js';
import { acquireLockFile } from './lock-file.js';
import { DEFAULT_PGLITE_SHARED_BUFFERS_MB, initialisePglite, openPglite } from './pglite.js';
import { PreparingClient } from './prepared.js';

export interface Database {
  db: Kysely<DB>;
  kind: 'pglite' | 'postgres';
  /** Subscribes to a NOTIFY channel; resolves once listening. The returned function unsubscribes. */
  listen(channel: string, handler: (payload: string) => void): Promise<() => Promise<void>>;
  /** The connection pool now: connections open, idle, and queries waiting for one (metrics). */
  poolUse(): PoolUse;
  close(): Promise<void>;
}

export interface PoolUse {
  total: number;
  idle: number;
  waiting: number;
}

function poolUse(pool: pg.Pool): PoolUse {
  return { total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount };
}

export interface DatabaseOptions {
  /** PostgreSQL connection string; without it, PGlite in `<dataDir>/pglite`. */
  databaseUrl?: string | undefined;
  dataDir: string;
  poolSize: number;
  /** PGlite's shared_buffers, in MB (default DEFAULT_PGLITE_SHARED_BUFFERS_MB in pglite.ts). */
  pgliteSharedBuffersMb?: number | undefined;
}

/** The longest a query waits for a pooled connection (to be free, or to be made) before it fails. */
const POOL_WAIT_MS = 10_000;

export function pgliteDirectory(dataDir: string): string {
  return path.join(dataDir, 'pglite');
}

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  if (options.databaseUrl) {
    const pool = new pg.Pool({
      connectionString: options.databaseUrl,
      max: options.poolSize,
      Client: PreparingClient,
      // Without a bound, a query waits forever for a connection the database cannot give (an unreachable host, a
      // pool held by stuck work): it fails after this instead, and the request answers 503 (isDatabaseUnavailable).
      connectionTimeoutMillis: POOL_WAIT_MS,
    });
    // An idle connection the server closes (restart, failover, admin termination) is dropped from the pool and
    // replaced on the next query; without a listener node-postgres would crash the process instead.
    pool.on('error', (error) => logLostConnection('idle database connection lost', error));
    // A connection can also drop while checked out (between two queries of a transaction). The pool only listens
    // on idle ones, so give each its own listener: the pending query fails with the reason, and the pool discards
    // the broken connection when it is released.
    pool.on('connect', (client) =>
      client.on('error', (error) => logLostConnection('database connection lost while in use', error)),
    );
    // Fail at start, with the driver's reason, rather than on the first request.
    const client = await pool.connect();
    client.release();
    const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
    const listener = new PostgresListener(options.databaseUrl);
    return {
      db,
      kind: 'postgres',
      listen: (channel, handler) => listener.listen(channel, handler),
      poolUse: () => poolUse(pool),
      close: async () => {
        await listener.close();
        await db.destroy();
      },
    };
  }
  const directory = pgliteDirectory(options.dataDir);
  fs.mkdirSync(directory, { recursive: true, mode: 0o700 });
  const releaseLock = acquireLockFile(path.join(options.dataDir, 'pglite.lock'));
  try {
    const sharedBuffers = options.pgliteSharedBuffersMb ?? DEFAULT_PGLITE_SHARED_BUFFERS_MB;
    await initialisePglite(directory, sharedBuffers);
    const pglite = await openPglite(directory, sharedBuffers);
    // Kysely's own dialect over the node-postgres adapter shipped with PGlite: concurrent transactions stay
    // isolated (the kysely-pglite package was measured mixing them up).
    const pool = new pg.Pool({ ...(createPgConfig(pglite) as unknown as pg.PoolConfig), Client: PreparingClient });
    const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
    return {
      db,
      kind: 'pglite',
      poolUse: () => poolUse(pool),
      listen: async (channel, handler) => {
        const unsubscribe = await pglite.listen(channel, handler);
        return () => unsubscribe();
      },
      close: async () => {
        try {
          await db.destroy();
          await pglite.close();
        } finally {
          releaseLock();
        }
      },
    };
  } catch (error) {
    releaseLock();
    throw error;
  }
}

function logLostConnection(msg: string, error: Error): void {
  process.stderr.write(`${JSON.stringify({ level: 40, msg, err: error.message })}\n`);
}
