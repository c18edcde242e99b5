import pg from 'pg';

type Handler = (payload: string) => void;

/**
 * LISTEN on one dedicated PostgreSQL connection (a pooled connection cannot hold a LISTEN). When the connection
 * drops it reconnects and listens again; notifications sent while it was down are lost, which is why every loop
 * that relies on them also polls.
 */
export class PostgresListener {
  private client: pg.Client | undefined;
  private connecting: Promise<pg.Client> | undefined;
  private readonly handlers = new Map<string, Set<Handler>>();
  private closed = false;

  constructor(private readonly connectionString: string) {}

  async listen(channel: string, handler: Handler): Promise<() => Promise<void>> {
    let set = this.handlers.get(channel);
    const first = !set;
    if (!set) {
      set = new Set();
      this.handlers.set(channel, set);
    }
    set.add(handler);
    const client = await this.connect();
    if (first) await client.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
    return async () => {
      set.delete(handler);
      if (set.size === 0 && this.handlers.get(channel) === set) {
        this.handlers.delete(channel);
        await this.client?.query(`UNLISTEN ${pg.escapeIdentifier(channel)}`).catch(() => undefined);
      }
    };
  }

  private connect(): Promise<pg.Client> {
    if (this.client) return Promise.resolve(this.client);
    this.connecting ??= (async () => {
      const client = new pg.Client({ connectionString: this.connectionString });
      client.on('notification', (message) => {
        for (const handler of this.handlers.get(message.channel) ?? []) handler(message.payload ?? '');
      });
      client.on('error', () => this.dropped(client));
      client.on('end', () => this.dropped(client));
      try {
        await client.connect();
        for (const channel of this.handlers.keys()) await client.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
        this.client = client;
        return client;
      } finally {
        this.connecting = undefined;
      }
    })();
    return this.connecting;
  }

  private dropped(client: pg.Client): void {
    if (this.client !== client) return;
    this.client = undefined;
    if (this.closed) return;
    const retry = () => {
      if (this.closed || this.client) return;
      this.connect().catch(() => setTimeout(retry, 1000).unref());
    };
    setTimeout(retry, 200).unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }
}
