// Benchmark of the runs API (POST and GET /api/v1/agent/runs) against bare-Fastify baselines measured in
// the same run. See bench/README.md for how to run it and bench/RESULTS.md for figures.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { loadConfig } from '../../src/config.js';
import { CursorCodec } from '../../src/platform/http/pagination.js';
import { loadSecretKey } from '../../src/platform/secret-key.js';
import { instanceSecret } from '../../src/platform/settings.js';
import { type RunningServer, startServer } from '../../src/server.js';
import { type Baseline, baselineCursor, CREATE_BODY, startBaseline } from './baseline.js';
import { createScratchDatabase, defaultOwner, kyselyQuery, poolQuery, type Query } from './database.js';
import { type Load, type LoadSettings, measure } from './load.js';
import { type Comparison, markdownTable, progressLine } from './report.js';
import { addColleagues, type Position, type SeedTeam, seedRuns, settle, spreadPositions } from './seed.js';

function wholeNumber(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a whole number, got "${raw}"`);
  return value;
}

const flag = (env: string, argument: string, value = '1') =>
  process.env[env] === value || process.argv.includes(argument);

const settings = {
  databaseUrl: process.env.BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test',
  /** 100k by default (`BENCH_RUNS` for a quick try); `BENCH_SCALE=1m` (or `--1m`) then measures again at 1M. */
  postgresScales: [wholeNumber('BENCH_RUNS', 100_000), ...(flag('BENCH_SCALE', '--1m', '1m') ? [1_000_000] : [])],
  /** PGlite is optional (`BENCH_PGLITE=1` or `--pglite`) and smaller: it is one in-process connection. */
  pgliteRuns: flag('BENCH_PGLITE', '--pglite') ? wholeNumber('BENCH_PGLITE_RUNS', 10_000) : 0,
  load: {
    connections: wholeNumber('BENCH_CONNECTIONS', 50),
    durationSeconds: wholeNumber('BENCH_DURATION', 10),
    warmupSeconds: wholeNumber('BENCH_WARMUP', 2),
    maxOthersCpuPercent: wholeNumber('BENCH_MAX_NOISE', 15),
    attempts: wholeNumber('BENCH_ATTEMPTS', 3),
  } satisfies LoadSettings,
  /**
   * The list again at a light fixed rate on one connection: with 50 connections flat out, latency is mostly
   * queueing (about connections / throughput), and several connections firing on the same tick queue behind
   * each other too, so this row shows the time a request itself takes. 0 skips it.
   */
  lightRate: wholeNumber('BENCH_LIGHT_RATE', 100),
  /**
   * The list at a sustained rate over several connections, about half of what the bare baseline serves flat out
   * on this machine: the p99 a team sees from a busy server that still has headroom. 0 skips it.
   */
  loadedRate: wholeNumber('BENCH_LOADED_RATE', 500),
  loadedConnections: wholeNumber('BENCH_LOADED_CONNECTIONS', 10),
  /** How many cursors the deep-page scenario cycles through, spread evenly over the whole table. */
  deepPositions: 200,
};

/** Everything started is stopped in reverse order, on success, failure or Ctrl-C. */
const cleanups: (() => Promise<unknown>)[] = [];
async function cleanUp(): Promise<void> {
  for (let next = cleanups.pop(); next; next = cleanups.pop()) {
    await next().catch((error: unknown) => console.error('cleanup step failed:', error));
  }
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => void cleanUp().finally(() => process.exit(130)));
}

interface Backend {
  database: Comparison['database'];
  server: RunningServer;
  apiKey: string;
  /** Hangar's secret key (the data directory's), which opens its instance keys. */
  secretKey: Buffer;
  /** Seeding and the baseline's queries: a pool the same size as Hangar's, or Hangar's own Kysely on PGlite. */
  query: Query;
  /** PIDs of the PostgreSQL backends of the scratch database (both servers'), when they run on this machine. */
  backends: () => Promise<number[]>;
}

/** The real server, in this process, as `hangar serve` would start it. */
async function startHangar(database: Comparison['database'], databaseUrl: string | undefined): Promise<Backend> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-bench-'));
  cleanups.push(async () => fs.rmSync(dataDir, { recursive: true, force: true }));
  const apiKey = `hgr_bench_${randomBytes(16).toString('hex')}`;
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    HANGAR_DATA_DIR: dataDir,
    HANGAR_BOOTSTRAP_API_KEY: apiKey,
    HANGAR_LOG_LEVEL: 'silent',
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
  });
  const server = await startServer(config);
  cleanups.push(() => server.stop());
  const secretKey = loadSecretKey(undefined, dataDir);
  if (!databaseUrl)
    return { database, server, apiKey, secretKey, query: kyselyQuery(server.database.db), backends: async () => [] };
  const pool = new pg.Pool({ connectionString: databaseUrl, max: config.dbPoolSize });
  cleanups.push(() => pool.end());
  const query = poolQuery(pool);
  const local = ['127.0.0.1', 'localhost', '[::1]', ''].includes(new URL(databaseUrl).hostname);
  const backends = async () =>
    local
      ? (await query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = current_database()')).map(
          (row) => row.pid,
        )
      : [];
  return { database, server, apiKey, secretKey, query, backends };
}

/** Fails early, with the answer, if a side does not serve a full page: a fast error is not a fast list. */
async function expectFullPage(url: string, headers: Record<string, string> = {}): Promise<void> {
  const response = await fetch(url, { headers });
  const body = (await response.json()) as { runs?: unknown[] };
  if (response.status !== 200 || body.runs?.length !== 20) {
    throw new Error(
      `GET ${url} answered ${response.status} with ${body.runs?.length} runs: ${JSON.stringify(body).slice(0, 300)}`,
    );
  }
}

/**
 * The searches measured (see Bench.searches); `BENCH_SEARCH=0` skips them, `BENCH_ONLY=search` measures nothing
 * else (no lists, no creates: the search figures before and after a change to the search alone).
 */
const SEARCHES = process.env.BENCH_SEARCH === '0' ? [] : ['investgate', 'investgate sheduler', 'flakey job'];
const ONLY_SEARCHES = process.env.BENCH_ONLY === 'search';

class Bench {
  readonly comparisons: Comparison[] = [];
  private readonly auth: Record<string, string>;

  constructor(
    private readonly backend: Backend,
    private readonly baseline: Baseline,
    private readonly hangarCursor: (position: Position) => string,
  ) {
    this.auth = { authorization: `Bearer ${backend.apiKey}` };
  }

  /** Ours, then the baseline, under the same load; one line printed as soon as both are measured. */
  private async compare(
    runs: number | undefined,
    scenario: string,
    ours: Load['requests'],
    baseline: Load['requests'],
    load: LoadSettings = settings.load,
  ): Promise<void> {
    const comparison: Comparison = {
      database: this.backend.database,
      runs,
      scenario,
      ...(load.overallRate ? { fixedRate: load.overallRate } : {}),
      ours: await measure({ baseUrl: this.backend.server.url, requests: ours, backends: this.backend.backends }, load),
      baseline: await measure(
        { baseUrl: this.baseline.url, requests: baseline, backends: this.backend.backends },
        load,
      ),
    };
    console.log(progressLine(comparison));
    this.comparisons.push(comparison);
  }

  async lists(runs: number): Promise<void> {
    const ourPage = '/api/v1/agent/runs?limit=20';
    const baselinePage = '/runs?limit=20';
    await expectFullPage(this.backend.server.url + ourPage, this.auth);
    await expectFullPage(this.baseline.url + baselinePage);
    const first = (requestPath: string, headers: Record<string, string>) => [
      { method: 'GET', path: requestPath, headers },
    ];
    await this.compare(runs, 'GET first page (limit=20)', first(ourPage, this.auth), first(baselinePage, {}));
    if (settings.lightRate > 0) {
      const light = { ...settings.load, connections: 1, warmupSeconds: 0, overallRate: settings.lightRate };
      const scenario = `GET first page at ${settings.lightRate} req/s (latency)`;
      await this.compare(runs, scenario, first(ourPage, this.auth), first(baselinePage, {}), light);
    }
    if (settings.loadedRate > 0) {
      const loaded = { ...settings.load, connections: settings.loadedConnections, overallRate: settings.loadedRate };
      const scenario = `GET first page at ${settings.loadedRate} req/s over ${settings.loadedConnections} connections (latency)`;
      await this.compare(runs, scenario, first(ourPage, this.auth), first(baselinePage, {}), loaded);
    }

    const positions = await spreadPositions(this.backend.query, runs, settings.deepPositions);
    const ourDeep = positions.map((p) => `${ourPage}&cursor=${encodeURIComponent(this.hangarCursor(p))}`);
    const baselineDeep = positions.map((p) => `${baselinePage}&cursor=${baselineCursor(p.updatedAt, p.id)}`);
    await expectFullPage(this.backend.server.url + ourDeep[0], this.auth);
    await expectFullPage(this.baseline.url + baselineDeep[0]);
    await this.compare(
      runs,
      `GET deep pages (${positions.length} cursors)`,
      ourDeep.map((p) => ({ method: 'GET', path: p, headers: this.auth })),
      baselineDeep.map((p) => ({ method: 'GET', path: p })),
    );
  }

  /**
   * The search (`q`) on one connection, one request at a time: a search is one person typing, not a flood, and the
   * time one takes is the figure. The seeded titles read "Investigate the cron scheduler (#g)" for one run in 42;
   * the queries misspell one word of it, then two (which the search before issue 24 did not find), then a word of
   * "the flaky CI job" (one run in 7) one letter off, which the search before issue 48 did not find. The baseline
   * is the bare first page under the same load: the ratio says what a search costs beside a plain list.
   */
  async searches(runs: number): Promise<void> {
    const oneByOne = { ...settings.load, connections: 1, warmupSeconds: 1 };
    const baselinePage = [{ method: 'GET', path: '/runs?limit=20' }];
    for (const q of SEARCHES) {
      const searchPath = `/api/v1/agent/runs?limit=20&q=${encodeURIComponent(q)}`;
      const response = await fetch(this.backend.server.url + searchPath, { headers: this.auth });
      const found = ((await response.json()) as { runs?: unknown[] }).runs?.length;
      if (response.status !== 200) throw new Error(`GET ${searchPath} answered ${response.status}`);
      await this.compare(
        runs,
        `GET search q="${q}" (${found} found), one connection`,
        [{ method: 'GET', path: searchPath, headers: this.auth }],
        baselinePage,
        oneByOne,
      );
    }
  }

  async creates(): Promise<void> {
    const json = { 'content-type': 'application/json' };
    await this.compare(
      undefined,
      'POST create run',
      [{ method: 'POST', path: '/api/v1/agent/runs', headers: { ...this.auth, ...json }, body: CREATE_BODY }],
      [{ method: 'POST', path: '/runs', headers: json, body: CREATE_BODY }],
    );
  }
}

async function benchBackend(backend: Backend, scales: number[]): Promise<Comparison[]> {
  const { server, query } = backend;
  const db = server.database.db;
  const owner = await defaultOwner(db);
  const team: SeedTeam = {
    teamUid: owner.teamUid,
    userUids: [owner.userUid, ...(await addColleagues(query, owner.teamUid, 4))],
  };
  const baseline = await startBaseline(query, owner);
  cleanups.push(() => baseline.close());
  // Deep pages need Hangar's signed cursors at chosen positions: sign them with Hangar's own codec and key.
  const cursors = new CursorCodec(await instanceSecret(db, 'cursor_signing_key', backend.secretKey));
  const bench = new Bench(backend, baseline, (p) =>
    cursors.encode({ ordering: 'updated_at:desc', values: [p.updatedAt, p.id] }),
  );

  // Lists first, on exactly the seeded rows: the create scenario adds tens of thousands of newer runs.
  let seeded = 0;
  for (const scale of scales) {
    const { insertSeconds, indexSeconds } = await seedRuns(query, team, seeded + 1, scale);
    seeded = scale;
    await settle(query);
    console.log(
      `${backend.database}: ${scale} runs (rows inserted in ${insertSeconds.toFixed(1)} s, indexes built in ${indexSeconds.toFixed(1)} s)`,
    );
    if (!ONLY_SEARCHES) await bench.lists(scale);
    await bench.searches(scale);
  }
  if (!ONLY_SEARCHES) await bench.creates();
  return bench.comparisons;
}

async function main(): Promise<void> {
  const { connections, durationSeconds, warmupSeconds } = settings.load;
  console.log(
    `runs API benchmark: ${os.cpus().length} cores, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}, ` +
      `${connections} connections, ${warmupSeconds} s warm-up + ${durationSeconds} s per measurement, ${new Date().toISOString()}`,
  );
  const comparisons: Comparison[] = [];

  const scratch = await createScratchDatabase(settings.databaseUrl);
  cleanups.push(() => scratch.drop());
  const postgres = await startHangar('PostgreSQL', scratch.url);
  const [version] = await postgres.query<{ server_version: string }>('SHOW server_version');
  console.log(`PostgreSQL ${version?.server_version}, scratch database ${new URL(scratch.url).pathname.slice(1)}`);
  comparisons.push(...(await benchBackend(postgres, settings.postgresScales)));
  await cleanUp(); // Free the PostgreSQL side before PGlite takes its share of the two cores.

  if (settings.pgliteRuns > 0) {
    comparisons.push(...(await benchBackend(await startHangar('PGlite', undefined), [settings.pgliteRuns])));
    await cleanUp();
  }

  console.log(`\n${markdownTable(comparisons)}`);
}

try {
  await main();
} finally {
  await cleanUp();
}
