import { createHash, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { FastifyInstance } from 'fastify';
import { Gauge, Registry } from 'prom-client';
import {
  CachedSample,
  collectProcessMetrics,
  metricsRegistry,
  OTHER_VALUE,
  serveMetrics,
} from '../platform/metrics.js';
import { queueDepth, RUN_STATES } from '../runs/index.js';
import { workerConnectionCounts } from '../workers/index.js';
import type { Component } from './components.js';
import type { Platform } from './platform.js';

/** Database-derived figures are read at most this often, whatever the number of scrapers and replicas. */
const SAMPLE_MS = 5_000;
/** Teams with the most queued runs that get a series of their own; the rest are summed as `other`. */
const TOP_TEAMS = 10;
/** The states a queue depth is given for: waiting and executing. */
const WAITING_STATES = RUN_STATES.filter((state) => ['QUEUED', 'PENDING', 'CLAIMED', 'INPROGRESS'].includes(state));

/**
 * `/metrics` in Prometheus' text format: the process's registry (every slice's counters and histograms, Node's
 * process metrics) and this server's figures read from its database (queue depth, connected workers) and its
 * pool. Served on the API port to requests with `Authorization: Bearer HANGAR_METRICS_TOKEN`, and on
 * HANGAR_METRICS_PORT when set (there too behind the token when one is set). With neither, nothing is served.
 */
export class MetricsEndpoint implements Component {
  private readonly server: Registry;
  private listener: http.Server | undefined;

  constructor(private readonly platform: Platform) {
    this.server = serverRegistry(platform);
  }

  get enabled(): boolean {
    const { metricsToken, metricsPort } = this.platform.config;
    return metricsToken !== undefined || metricsPort !== undefined;
  }

  /** Where the metrics port listens (known once started), e.g. http://127.0.0.1:9464; undefined without one. */
  get url(): string | undefined {
    const address = this.listener?.address();
    if (!address || typeof address !== 'object') return undefined;
    const host = address.address.includes(':') ? `[${address.address}]` : address.address;
    return `http://${host}:${address.port}`;
  }

  /** Adds `/metrics` to the API's app when a token is set. */
  register(app: FastifyInstance): void {
    const token = this.platform.config.metricsToken;
    if (token === undefined) return;
    app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
      if (!bears(request.headers.authorization, token))
        return reply
          .code(401)
          .header('www-authenticate', 'Bearer realm="metrics"')
          .type('text/plain')
          .send('a bearer token is required\n');
      const { type, body } = await this.scrape();
      return reply.type(type).header('cache-control', 'no-store').send(body);
    });
  }

  async start(): Promise<void> {
    if (!this.enabled) return;
    serveMetrics();
    collectProcessMetrics();
    const { metricsPort, metricsToken, host } = this.platform.config;
    if (metricsPort === undefined) return;
    const listener = http.createServer((request, response) => {
      void this.answer(request, response, metricsToken);
    });
    await new Promise<void>((resolve, reject) => {
      listener.once('error', reject);
      listener.listen(metricsPort, host, () => resolve());
    });
    this.listener = listener;
  }

  async stop(): Promise<void> {
    const listener = this.listener;
    this.listener = undefined;
    if (!listener) return;
    listener.closeAllConnections();
    await new Promise<void>((resolve) => listener.close(() => resolve()));
  }

  private async answer(request: http.IncomingMessage, response: http.ServerResponse, token: string | undefined) {
    const path = (request.url ?? '').split('?')[0];
    if (path !== '/metrics' || (request.method !== 'GET' && request.method !== 'HEAD')) {
      response
        .writeHead(404, { 'content-type': 'text/plain' })
        .end('not found: the metrics port serves GET /metrics\n');
      return;
    }
    if (token !== undefined && !bears(request.headers.authorization, token)) {
      response
        .writeHead(401, { 'content-type': 'text/plain', 'www-authenticate': 'Bearer realm="metrics"' })
        .end('a bearer token is required\n');
      return;
    }
    try {
      const { type, body } = await this.scrape();
      response.writeHead(200, { 'content-type': type, 'cache-control': 'no-store' }).end(body);
    } catch (error) {
      this.platform.log.warn({ err: error }, 'metrics scrape failed');
      response.writeHead(500, { 'content-type': 'text/plain' }).end('metrics are unavailable\n');
    }
  }

  private async scrape(): Promise<{ type: string; body: string }> {
    const merged = Registry.merge([metricsRegistry, this.server]);
    return { type: merged.contentType, body: await merged.metrics() };
  }
}

/** Whether an Authorization header bears `token` (compared in constant time). */
function bears(header: string | undefined, token: string): boolean {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  if (!match) return false;
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(match[1]!), digest(token));
}

/** This server's figures: read from its database through one shared sample, or from its pool as they are. */
function serverRegistry(platform: Platform): Registry {
  const registry = new Registry();
  const registers = [registry];
  const { db, database, config } = platform;
  const runs = new CachedSample(() => queueDepth(db), SAMPLE_MS);
  const workers = new CachedSample(() => workerConnectionCounts(db, config.workerHeartbeatSeconds * 3), SAMPLE_MS);
  new Gauge({
    name: 'hangar_runs_queue_depth',
    help: `Runs waiting or executing, by state, across all replicas (read at most every ${SAMPLE_MS / 1000} s)`,
    labelNames: ['state'] as const,
    registers,
    async collect() {
      const depth = await runs.get();
      for (const state of WAITING_STATES) this.set({ state }, depth.byState.get(state) ?? 0);
    },
  });
  new Gauge({
    name: 'hangar_runs_queue_depth_by_team',
    help: `Queued runs of the ${TOP_TEAMS} teams with the most, by team uid; the other teams' summed as team="other"`,
    labelNames: ['team'] as const,
    registers,
    async collect() {
      const depth = await runs.get();
      const queued = [...depth.byTeam].map(([team, states]) => ({ team, runs: states.get('QUEUED') ?? 0 }));
      queued.sort((a, b) => b.runs - a.runs || a.team.localeCompare(b.team));
      // Teams drop out of the top as their queues drain: their series go with them.
      this.reset();
      for (const { team, runs: count } of queued.slice(0, TOP_TEAMS)) if (count > 0) this.set({ team }, count);
      this.set(
        { team: OTHER_VALUE },
        queued.slice(TOP_TEAMS).reduce((sum, entry) => sum + entry.runs, 0),
      );
    },
  });
  new Gauge({
    name: 'hangar_workers_connected',
    help: 'Self-hosted workers (team and worker ID) with at least one live connection, across all replicas',
    registers,
    async collect() {
      this.set((await workers.get()).workers);
    },
  });
  new Gauge({
    name: 'hangar_worker_connections',
    help: 'Live self-hosted worker connections across all replicas',
    registers,
    async collect() {
      this.set((await workers.get()).connections);
    },
  });
  new Gauge({
    name: 'hangar_db_pool_connections',
    help: "This replica's database pool: connections in use and idle, and queries waiting for a connection",
    labelNames: ['state'] as const,
    registers,
    collect() {
      const use = database.poolUse();
      this.set({ state: 'in_use' }, use.total - use.idle);
      this.set({ state: 'idle' }, use.idle);
      this.set({ state: 'waiting' }, use.waiting);
    },
  });
  return registry;
}
