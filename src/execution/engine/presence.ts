import type { FastifyBaseLogger } from 'fastify';
import { type Kysely, sql } from 'kysely';
import pg from 'pg';
import type { DB } from '../../database.js';

export interface EnginePresenceOptions {
  db: Kysely<DB>;
  engineId: string;
  /** PostgreSQL: where the lock connection goes. Undefined on PGlite, where one process owns the data directory. */
  databaseUrl: string | undefined;
  log: FastifyBaseLogger;
}

/** After the lock connection drops: first try, and the wait between tries while the database is unreachable. */
const RELOCK_FIRST_MS = 100;
const RELOCK_RETRY_MS = 1000;

/**
 * That this engine is alive, for the other replicas (issue 23): a row in `engines` whose heartbeat the engine
 * renews with its leases and, on PostgreSQL, a session advisory lock held on a connection of its own. When the
 * process dies, PostgreSQL closes that connection and releases the lock at once; another replica that finds the
 * lock free and the heartbeat stale takes back all the engine's runs (src/runs/lifecycle/leases.ts) instead of
 * waiting for their leases. If only the lock connection drops, the engine connects again and takes the lock
 * again; its heartbeat, through the pool, keeps it alive meanwhile.
 */
export class EnginePresence {
  private client: pg.Client | undefined;
  private locking: Promise<void> | undefined;
  private closed = false;

  constructor(private readonly options: EnginePresenceOptions) {}

  /** Before the first claim: the row, and the lock on PostgreSQL. */
  async start(): Promise<void> {
    if (this.options.databaseUrl) await this.lock();
    else await this.heartbeat();
  }

  /** With each lease renewal. Also re-creates a row another replica forgot while this engine looked gone. */
  async heartbeat(): Promise<void> {
    await sql`INSERT INTO engines (id) VALUES (${this.options.engineId})
      ON CONFLICT (id) DO UPDATE SET heartbeat_at = clock_timestamp()`.execute(this.options.db);
  }

  /** After the engine's runs have ended: forgets the row and releases the lock. */
  async stop(): Promise<void> {
    this.closed = true;
    await this.locking?.catch(() => undefined);
    await this.options.db
      .deleteFrom('engines')
      .where('id', '=', this.options.engineId)
      .execute()
      .catch((error) => this.options.log.warn({ err: error }, 'could not remove the engine row'));
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private lock(): Promise<void> {
    this.locking ??= (async () => {
      const { databaseUrl, engineId } = this.options;
      const client = new pg.Client({ connectionString: databaseUrl, application_name: `hangar ${engineId}` });
      client.on('error', () => this.dropped(client));
      client.on('end', () => this.dropped(client));
      try {
        await client.connect();
        // Waits while an old session of this engine still holds it (a connection the server has not seen close).
        await client.query('SELECT hangar_lock_engine($1)', [engineId]);
        if (this.closed) await client.end();
        else this.client = client;
      } catch (error) {
        await client.end().catch(() => undefined);
        throw error;
      } finally {
        this.locking = undefined;
      }
    })();
    return this.locking;
  }

  private dropped(client: pg.Client): void {
    if (this.client !== client) return;
    this.client = undefined;
    this.options.log.warn('the engine lost its lock connection; taking the lock again');
    const retry = (ms: number) =>
      setTimeout(() => {
        if (this.closed || this.client) return;
        this.lock().catch(() => retry(RELOCK_RETRY_MS));
      }, ms).unref();
    retry(RELOCK_FIRST_MS);
  }
}
