/**
 * Warm-start benchmark (issue 28): create -> agent started for a run whose environment clones a repository of a few
 * thousand files and runs a real `npm ci` of about 50 packages (offline, from a copy of the npm cache Hangar's own
 * `npm ci` filled), under bwrap and under containers (one after the other), on three paths, with the same clone +
 * `npm ci` by hand as the baseline, all interleaved in one run:
 *
 * - cold: a new environment per run (no snapshot; the git object cache is warm after the first run, as on a server
 *   that has seen the repository before);
 * - warm: one environment, same commit (its first, cold run is not counted);
 * - updated: one environment, a new commit (not touching the lockfile) before each run;
 * - by hand: `git clone` from the same bare repository + `npm ci` in a new directory, on the host (bwrap) or in a
 *   container of the same image over it, with the limits Hangar's run containers get (container).
 *
 * Per run: agent_started minus oz_run_created (both written with the database clock).
 *
 *   BENCH_WARM_RUNS     measured runs per path (default 20), after BENCH_WARM_WARMUP (default 1)
 *   BENCH_WARM_FILES    files in the fixture repository (default 3000)
 *   BENCH_NPM_CACHE     the npm cache to copy (default ~/.npm)
 *   BENCH_WARM_DIR      where the repositories, the data directory and the by-hand directories go (default
 *                       /var/tmp; not /tmp); see bench/README.md for why its file system matters
 *   BENCH_WARM_SANDBOXES  bwrap,container (default both)
 *   BENCH_DOCKER_HOST   the container engine (default DOCKER_HOST, else /var/run/docker.sock)
 *   BENCH_WARM_BASE_IMAGE  a Debian bookworm image (default localhost/hangar-test/debian:bookworm); the bench adds
 *                       the host's node, npm and git and the npm cache to it
 */
import { execFile, execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import { loadConfig } from '../../src/config.js';
import { EngineClient } from '../../src/execution/sandbox/container/engine-client.js';
import { type RunningServer, startServer } from '../../src/server.js';
import { apiRequest } from '../support/api.js';
import { percentile } from '../support/latency.js';
import { BENCH_IMAGE, makeBenchImage, removeBenchImage, runInContainer } from './container-image.js';
import { fixtureLock, trimmedCache } from './fixture-lock.js';

const count = (name: string, fallback: number) => {
  const value = Number(process.env[name] || fallback);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive whole number`);
  return value;
};
const settings = {
  sandboxes: (process.env.BENCH_WARM_SANDBOXES || 'bwrap,container').split(',') as Array<'bwrap' | 'container'>,
  dockerHost: process.env.BENCH_DOCKER_HOST || process.env.DOCKER_HOST || 'unix:///var/run/docker.sock',
  baseImage: process.env.BENCH_WARM_BASE_IMAGE || 'localhost/hangar-test/debian:bookworm',
  runs: count('BENCH_WARM_RUNS', 20),
  warmup: count('BENCH_WARM_WARMUP', 1),
  files: count('BENCH_WARM_FILES', 3000),
  npmCache: process.env.BENCH_NPM_CACHE || path.join(os.homedir(), '.npm'),
  directory: process.env.BENCH_WARM_DIR || '/var/tmp',
};
const run = promisify(execFile);
const API_KEY = `hgr_bench_${randomUUID().replace(/-/g, '')}`;
const PACKAGES = ['fastify', 'commander', 'yaml'];

const request = (server: RunningServer, method: string, url: string, body?: unknown) =>
  apiRequest(server, API_KEY, method, url, body);

/** The fixture: `files` small source files in 30 directories, and a package.json with its lockfile. */
function makeRepository(gitRoot: string): { commit: (file: string, content: string) => void; bare: string } {
  const work = path.join(gitRoot, '.work');
  // Two repositories with the same content: `app` never changes (cold, warm, by hand), `moving` gets the commits.
  const bare = path.join(gitRoot, 'acme', 'app');
  const moving = path.join(gitRoot, 'acme', 'moving');
  fs.mkdirSync(work, { recursive: true });
  for (let i = 0; i < settings.files; i++) {
    const directory = path.join(work, 'src', `module${i % 30}`);
    fs.mkdirSync(directory, { recursive: true });
    fs.writeFileSync(
      path.join(directory, `file${i}.js`),
      `// file ${i}\nexport function f${i}(x) {\n  return x * ${i} + ${i % 7};\n}\n`.repeat(8),
    );
  }
  const { packageJson, lock, count: packages } = fixtureLock(path.resolve('package-lock.json'), PACKAGES);
  fs.writeFileSync(path.join(work, 'package.json'), packageJson);
  fs.writeFileSync(path.join(work, 'package-lock.json'), lock);
  console.log(`fixture: ${settings.files} files, ${packages} npm packages (${PACKAGES.join(', ')} and theirs)`);
  const git = (cwd: string, ...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=bench', '-c', 'user.email=bench@example.invalid', '-C', cwd, ...args], {
      stdio: 'ignore',
    });
  for (const repository of [bare, moving]) {
    fs.mkdirSync(repository, { recursive: true });
    git(repository, 'init', '-q', '--bare', '--initial-branch=main');
  }
  git(work, 'init', '-q', '--initial-branch=main');
  git(work, 'add', '.');
  git(work, 'commit', '-qm', 'init');
  git(work, 'push', '-q', bare, 'HEAD:main');
  git(work, 'push', '-q', moving, 'HEAD:main');
  return {
    bare,
    commit: (file, content) => {
      fs.writeFileSync(path.join(work, file), content);
      git(work, 'add', '.');
      git(work, 'commit', '-qm', 'change');
      git(work, 'push', '-q', moving, 'HEAD:main');
    },
  };
}

async function oneRun(
  server: RunningServer,
  environmentId: string,
): Promise<{ runId: string; path: string; steps: Record<string, number> }> {
  const { run_id: runId } = await request(server, 'POST', '/agent/runs', {
    prompt: 'x',
    config: { environment_id: environmentId },
  });
  const began = Date.now();
  for (;;) {
    const run = await request(server, 'GET', `/agent/runs/${runId}`);
    if (Date.now() - began > 300_000) throw new Error(`run ${runId} is still ${run.state} after 5 minutes`);
    if (['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED'].includes(run.state)) {
      if (run.state !== 'SUCCEEDED') throw new Error(`run ${runId} ended ${JSON.stringify(run)}`);
      // The removal of the snapshots this run superseded (thousands of files) and of its retired container go on
      // after it: the next measurement (by hand or Hangar's) must not overlap with them.
      await server.engine?.settled();
      const timeline = await request(server, 'GET', `/agent/runs/${runId}/timeline`);
      const done = timeline.events.find((event: any) => event.event_type === 'environment_setup_done');
      const started = timeline.events.find((event: any) => event.event_type === 'agent_started');
      return {
        runId,
        path: done?.payload?.path ?? '?',
        steps: { ...(done?.payload?.steps_ms ?? {}), agent_start: started?.payload?.start_ms ?? 0 },
      };
    }
    await sleep(10);
  }
}

async function startTimes(server: RunningServer, runIds: string[]): Promise<number[]> {
  const rows = await sql<{ ms: number }>`
    SELECT extract(epoch FROM a.occurred_at - r.occurred_at) * 1000 AS ms
    FROM run_events r JOIN run_events a ON a.run_id = r.run_id AND a.event_type = 'agent_started'
    WHERE r.event_type = 'oz_run_created' AND r.run_id = ANY(${runIds}::text[])`.execute(server.database.db);
  return rows.rows.map((row) => Number(row.ms)).sort((a, b) => a - b);
}

/** One sandbox's measurements: cold, warm and updated beside the same clone + setup by hand, interleaved. */
async function measure(
  sandbox: 'bwrap' | 'container',
  root: string,
  gitRoot: string,
  repository: ReturnType<typeof makeRepository>,
  npmCache: string,
  engine: EngineClient | undefined,
): Promise<string[]> {
  // Under containers the npm cache is in the image (the container sees only its workspace); under bwrap on the host.
  const cache = sandbox === 'container' ? '/opt/npm-cache' : npmCache;
  const npmCi = `cp -r ${cache} "$HOME/.npm-cache" && cd app && npm ci --offline --no-audit --no-fund --logs-max=0 --cache "$HOME/.npm-cache"`;
  const dataDir = path.join(root, `data-${sandbox}`);
  const operatorFile = path.join(root, 'hangar.yaml');
  fs.writeFileSync(operatorFile, "default_harness: noop\nharnesses:\n  noop:\n    command: ['/bin/true']\n");
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    HANGAR_LOG_LEVEL: 'silent',
    HANGAR_DATA_DIR: dataDir,
    HANGAR_BOOTSTRAP_API_KEY: API_KEY,
    HANGAR_CONFIG: operatorFile,
    HANGAR_GIT_BASE_URL: `file://${gitRoot}`,
    HANGAR_SETUP_NETWORK: 'false',
    HANGAR_SANDBOX: sandbox,
    HANGAR_SNAPSHOT_TTL: '24h',
    ...(engine ? { DOCKER_HOST: engine.dockerHost, HANGAR_DEFAULT_IMAGE: BENCH_IMAGE } : {}),
  });
  const server = await startServer(config, { logger: false });
  const environment = async (repo = 'app') =>
    (
      await request(server, 'POST', '/environments', {
        name: `bench ${randomUUID()}`,
        github_repos: [{ owner: 'acme', repo }],
        setup_commands: [npmCi.replace('cd app', `cd ${repo}`)],
      })
    ).uid as string;
  const ids = { cold: [] as string[], warm: [] as string[], updated: [] as string[] };
  const byHand: number[] = [];
  const paths = new Map<string, Set<string>>();
  const steps = new Map<string, Array<Record<string, number>>>();
  const table: string[] = [];
  try {
    const warmEnvironment = await environment();
    const updatedEnvironment = await environment('moving');
    await oneRun(server, warmEnvironment);
    await oneRun(server, updatedEnvironment);
    for (let i = 0; i < settings.warmup + settings.runs; i++) {
      const measured = i >= settings.warmup;
      // By hand: the same clone and the same npm ci, in a new directory: on the host, or in a container of the image.
      const hand = fs.mkdtempSync(path.join(root, 'hand-'));
      fs.chmodSync(hand, 0o755);
      const byHandRun = async () => {
        const started = performance.now();
        // Not execFileSync: the server shares this process, and its leases must go on being renewed meanwhile.
        if (engine) {
          await run('git', ['clone', '-q', repository.bare, 'app'], { cwd: hand });
          await runInContainer(engine, hand, npmCi, config.container.limits);
        } else {
          await run('sh', ['-c', `git clone -q ${repository.bare} app && ${npmCi}`], {
            cwd: hand,
            env: { ...process.env, HOME: hand },
          });
        }
        return performance.now() - started;
      };
      // By hand and cold take turns at going first: on this machine's ext4 (see below) the first to create thousands
      // of files after an iteration's removals is slowed the most.
      const coldEnvironment = await environment();
      let handMs = 0;
      if (i % 2 === 0) handMs = await byHandRun();
      const cold = await oneRun(server, coldEnvironment);
      if (i % 2 === 1) handMs = await byHandRun();
      if (measured) byHand.push(handMs);
      const warm = await oneRun(server, warmEnvironment);
      repository.commit(`src/module0/change-${sandbox}-${i}.js`, `export const change = ${i};\n`);
      const updated = await oneRun(server, updatedEnvironment);
      // Kept until the end, as the cold runs' workspaces are (each became its environment's snapshot): on an ext4
      // without a journal (this machine's), each new file's inode is looked for past those freed in the last
      // minutes, so removing the last iteration's thousands of files would slow this one's checkout and npm ci
      // several fold, by hand only.
      const line: string[] = [
        `${sandbox} run ${i + 1}${measured ? '' : ' (warm-up)'}: by hand ${handMs.toFixed(0)} ms`,
      ];
      for (const [name, done] of [
        ['cold', cold],
        ['warm', warm],
        ['updated', updated],
      ] as const) {
        if (!paths.has(name)) paths.set(name, new Set());
        paths.get(name)!.add(done.path);
        if (measured) {
          ids[name].push(done.runId);
          steps.set(name, [...(steps.get(name) ?? []), done.steps]);
        }
        line.push(
          `${name} ${(await startTimes(server, [done.runId]))[0]!.toFixed(0)} ms (${done.path} ${JSON.stringify(done.steps)})`,
        );
      }
      console.log(line.join(', '));
    }
    byHand.sort((a, b) => a - b);
    const baseline = percentile(byHand, 50);
    table.push(
      `create -> agent started under ${sandbox}, ${settings.runs} runs each, load ${os.loadavg()[0]!.toFixed(2)}`,
      '',
      '| path | p50 | p90 | max | p50 vs by hand | median steps (ms) |',
      '|---|---:|---:|---:|---:|---|',
      `| by hand (git clone + npm ci${engine ? ' in a container' : ''}) | ${baseline.toFixed(0)} ms | ${percentile(byHand, 90).toFixed(0)} ms | ${byHand.at(-1)!.toFixed(0)} ms | - | |`,
    );
    for (const name of ['cold', 'warm', 'updated'] as const) {
      const times = await startTimes(server, ids[name]);
      const p50 = percentile(times, 50);
      table.push(
        `| ${name} (${[...paths.get(name)!].join('/')}) | ${p50.toFixed(0)} ms | ${percentile(times, 90).toFixed(0)} ms | ${times.at(-1)!.toFixed(0)} ms | ${p50 >= baseline ? '+' : ''}${(p50 - baseline).toFixed(0)} ms | ${medianSteps(steps.get(name) ?? [])} |`,
      );
    }
  } finally {
    await server.stop().catch(() => undefined);
  }
  return table;
}

/** Each step's median over the runs (steps_ms of environment_setup_done, and start_ms of agent_started). */
function medianSteps(all: Array<Record<string, number>>): string {
  const names = [...new Set(all.flatMap((steps) => Object.keys(steps)))];
  return names
    .map((name) => {
      const values = all.map((steps) => steps[name] ?? 0).sort((a, b) => a - b);
      return `${name} ${percentile(values, 50).toFixed(0)}`;
    })
    .join(', ');
}

async function main(): Promise<void> {
  // Not under /tmp: the sandbox has its own /tmp, and setup must see the npm cache.
  const root = fs.mkdtempSync(path.join(settings.directory, 'hangar-bench-warm-'));
  // A root server clones as its run user, who must reach the repository, the npm cache and the data directory.
  fs.chmodSync(root, 0o755);
  const gitRoot = path.join(root, 'git');
  const repository = makeRepository(gitRoot);
  // The packages' entries of the npm cache, readable by the run user; each setup copies it into its HOME (npm does
  // not install from a cache it cannot write), and so does the baseline.
  const npmCache = path.join(root, 'npm-cache');
  trimmedCache(settings.npmCache, npmCache, fs.readFileSync(path.join(gitRoot, '.work', 'package-lock.json'), 'utf8'));
  execFileSync('chmod', ['-R', 'a+rX', npmCache]);
  const engine = settings.sandboxes.includes('container') ? new EngineClient(settings.dockerHost) : undefined;
  const tables: string[] = [];
  try {
    if (engine) await makeBenchImage(engine, settings.baseImage, npmCache);
    for (const sandbox of settings.sandboxes)
      tables.push(
        ...(await measure(sandbox, root, gitRoot, repository, npmCache, sandbox === 'container' ? engine : undefined)),
        '',
      );
    console.log(`\n${tables.join('\n')}`);
  } finally {
    if (engine) await removeBenchImage(engine).catch(() => undefined);
    fs.rmSync(root, { recursive: true, force: true });
  }
}

await main();
