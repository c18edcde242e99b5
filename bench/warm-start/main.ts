/**
 * Warm-start benchmark (issue 28): create -> agent started for a run whose environment clones a repository of a few
 * thousand files and runs a real `npm ci` of about 50 packages (offline, from a copy of the npm cache Hangar's own
 * `npm ci` filled), under bwrap, on three paths, with the same clone + `npm ci` by hand as the baseline, all
 * interleaved in one run:
 *
 * - cold: a new environment per run (no snapshot; the git object cache is warm after the first run, as on a server
 *   that has seen the repository before);
 * - warm: one environment, same commit (its first, cold run is not counted);
 * - updated: one environment, a new commit (not touching the lockfile) before each run;
 * - by hand: `git clone` from the same bare repository + `npm ci` in a new directory, on the host.
 *
 * Per run: agent_started minus oz_run_created (both written with the database clock).
 *
 *   BENCH_WARM_RUNS     measured runs per path (default 20), after BENCH_WARM_WARMUP (default 1)
 *   BENCH_WARM_FILES    files in the fixture repository (default 3000)
 *   BENCH_NPM_CACHE     the npm cache to copy (default ~/.npm)
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
import { startServer, type RunningServer } from '../../src/server.js';
import { apiRequest } from '../support/api.js';
import { percentile } from '../support/latency.js';
import { fixtureLock, trimmedCache } from './fixture-lock.js';

const count = (name: string, fallback: number) => {
  const value = Number(process.env[name] || fallback);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive whole number`);
  return value;
};
const settings = {
  runs: count('BENCH_WARM_RUNS', 20),
  warmup: count('BENCH_WARM_WARMUP', 1),
  files: count('BENCH_WARM_FILES', 3000),
  npmCache: process.env.BENCH_NPM_CACHE || path.join(os.homedir(), '.npm'),
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

async function oneRun(server: RunningServer, environmentId: string): Promise<{ runId: string; path: string }> {
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
      const timeline = await request(server, 'GET', `/agent/runs/${runId}/timeline`);
      const done = timeline.events.find((event: any) => event.event_type === 'environment_setup_done');
      return { runId, path: done?.payload?.path ?? '?' };
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

async function main(): Promise<void> {
  // Not under /tmp: the sandbox has its own /tmp, and setup must see the npm cache.
  const root = fs.mkdtempSync('/var/tmp/hangar-bench-warm-');
  // A root server clones as its run user, who must reach the repository, the npm cache and the data directory.
  fs.chmodSync(root, 0o755);
  const gitRoot = path.join(root, 'git');
  const repository = makeRepository(gitRoot);
  // The packages' entries of the npm cache, readable by the run user; each setup copies it into its HOME (npm does
  // not install from a cache it cannot write), and so does the baseline.
  const npmCache = path.join(root, 'npm-cache');
  trimmedCache(settings.npmCache, npmCache, fs.readFileSync(path.join(gitRoot, '.work', 'package-lock.json'), 'utf8'));
  execFileSync('chmod', ['-R', 'a+rX', npmCache]);
  const npmCi = `cp -r ${npmCache} "$HOME/.npm-cache" && cd app && npm ci --offline --no-audit --no-fund --logs-max=0 --cache "$HOME/.npm-cache"`;
  const dataDir = path.join(root, 'data');
  const operatorFile = path.join(root, 'hangar.yaml');
  fs.writeFileSync(operatorFile, "default_harness: noop\nharnesses:\n  noop:\n    command: ['/bin/true']\n");
  const server = await startServer(
    loadConfig({
      PORT: '0',
      HOST: '127.0.0.1',
      HANGAR_LOG_LEVEL: 'silent',
      HANGAR_DATA_DIR: dataDir,
      HANGAR_BOOTSTRAP_API_KEY: API_KEY,
      HANGAR_CONFIG: operatorFile,
      HANGAR_GIT_BASE_URL: `file://${gitRoot}`,
      HANGAR_SETUP_NETWORK: 'false',
      HANGAR_SANDBOX: 'bwrap',
      HANGAR_SNAPSHOT_TTL: '24h',
    }),
    { logger: false },
  );
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
  try {
    const warmEnvironment = await environment();
    const updatedEnvironment = await environment('moving');
    await oneRun(server, warmEnvironment);
    await oneRun(server, updatedEnvironment);
    for (let i = 0; i < settings.warmup + settings.runs; i++) {
      const measured = i >= settings.warmup;
      // By hand: the same clone and the same npm ci, on the host, in a new directory.
      const hand = fs.mkdtempSync(path.join(root, 'hand-'));
      const started = performance.now();
      let handMs = 0;
      // Not execFileSync: the server shares this process, and its leases must go on being renewed meanwhile.
      await run('sh', ['-c', `git clone -q ${repository.bare} app && ${npmCi}`], {
        cwd: hand,
        env: { ...process.env, HOME: hand },
      });
      handMs = performance.now() - started;
      if (measured) byHand.push(handMs);
      fs.rmSync(hand, { recursive: true, force: true });
      const cold = await oneRun(server, await environment());
      const warm = await oneRun(server, warmEnvironment);
      repository.commit(`src/module0/change${i}.js`, `export const change = ${i};\n`);
      const updated = await oneRun(server, updatedEnvironment);
      const line: string[] = [`run ${i + 1}${measured ? '' : ' (warm-up)'}: by hand ${handMs.toFixed(0)} ms`];
      for (const [name, done] of [
        ['cold', cold],
        ['warm', warm],
        ['updated', updated],
      ] as const) {
        if (!paths.has(name)) paths.set(name, new Set());
        paths.get(name)!.add(done.path);
        if (measured) ids[name].push(done.runId);
        line.push(`${name} ${(await startTimes(server, [done.runId]))[0]!.toFixed(0)} ms (${done.path})`);
      }
      console.log(line.join(', '));
    }
    byHand.sort((a, b) => a - b);
    const baseline = percentile(byHand, 50);
    console.log(
      `\ncreate -> agent started under bwrap, ${settings.runs} runs each, load ${os.loadavg()[0]!.toFixed(2)}\n`,
    );
    console.log('| path | p50 | p90 | max | p50 vs by hand |');
    console.log('|---|---:|---:|---:|---:|');
    console.log(
      `| by hand (git clone + npm ci) | ${baseline.toFixed(0)} ms | ${percentile(byHand, 90).toFixed(0)} ms | ${byHand.at(-1)!.toFixed(0)} ms | - |`,
    );
    for (const name of ['cold', 'warm', 'updated'] as const) {
      const times = await startTimes(server, ids[name]);
      const p50 = percentile(times, 50);
      console.log(
        `| ${name} (${[...paths.get(name)!].join('/')}) | ${p50.toFixed(0)} ms | ${percentile(times, 90).toFixed(0)} ms | ${times.at(-1)!.toFixed(0)} ms | ${p50 >= baseline ? '+' : ''}${(p50 - baseline).toFixed(0)} ms |`,
      );
    }
  } finally {
    await server.stop().catch(() => undefined);
    fs.rmSync(root, { recursive: true, force: true });
  }
}

await main();
