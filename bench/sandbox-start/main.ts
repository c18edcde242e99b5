/**
 * Sandbox start benchmark: the figure users feel, create -> agent started, for a run whose environment has a
 * repository and one setup command, under `bwrap` and under `container` (each engine given), measured in the same
 * run with the servers taking turns, one run at a time. Per run: agent_started minus oz_run_created (both written
 * with the database clock). Target: the container's overhead over bwrap <= 250 ms at p50.
 *
 *   BENCH_SANDBOX_RUNS      measured runs per sandbox (default 50), after BENCH_SANDBOX_WARMUP (default 3)
 *   BENCH_PODMAN_HOST       Podman's service (default unix:///run/hangar-test/podman.sock when it exists)
 *   BENCH_DOCKER_HOST       Docker Engine (default unix:///var/run/docker.sock when it exists)
 *   BENCH_IMAGE             the environment's image (default localhost/hangar-test/debian:bookworm, from
 *                           scripts/container-engines.sh)
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { loadConfig } from '../../src/config.js';
import { type RunningServer, startServer } from '../../src/server.js';
import { apiRequest } from '../support/api.js';
import { percentile } from '../support/latency.js';

const count = (name: string, fallback: number) => {
  const value = Number(process.env[name] || fallback);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive whole number`);
  return value;
};
const socketOf = (name: string, fallback: string) =>
  process.env[name] ?? (fs.existsSync(fallback.replace('unix://', '')) ? fallback : '');
const settings = {
  runs: count('BENCH_SANDBOX_RUNS', 50),
  warmup: count('BENCH_SANDBOX_WARMUP', 3),
  image: process.env.BENCH_IMAGE || 'localhost/hangar-test/debian:bookworm',
  engines: [
    ['podman', socketOf('BENCH_PODMAN_HOST', 'unix:///run/hangar-test/podman.sock')],
    ['docker', socketOf('BENCH_DOCKER_HOST', 'unix:///var/run/docker.sock')],
  ].filter(([, host]) => host !== '') as Array<[string, string]>,
};
const API_KEY = `hgr_bench_${randomUUID().replace(/-/g, '')}`;

interface Subject {
  name: string;
  server: RunningServer;
  environmentId: string;
  runIds: string[];
}

const request = (server: RunningServer, method: string, url: string, body?: unknown) =>
  apiRequest(server, API_KEY, method, url, body);

async function subject(name: string, root: string, gitBase: string, env: Record<string, string>): Promise<Subject> {
  const dataDir = fs.mkdtempSync(path.join(root, `${name.replace(/\W/g, '-')}-`));
  const operatorFile = path.join(dataDir, 'hangar.yaml');
  // The harness does nothing: what is measured is everything before it.
  fs.writeFileSync(operatorFile, "default_harness: noop\nharnesses:\n  noop:\n    command: ['/bin/true']\n");
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    HANGAR_LOG_LEVEL: 'silent',
    HANGAR_DATA_DIR: dataDir,
    HANGAR_BOOTSTRAP_API_KEY: API_KEY,
    HANGAR_CONFIG: operatorFile,
    HANGAR_GIT_BASE_URL: gitBase,
    HANGAR_SETUP_NETWORK: 'false',
    // Every run sets up from nothing: under bwrap a setup snapshot would otherwise serve the runs after the first
    // (containers have none yet), and the figure is the sandboxes' own cost.
    HANGAR_SNAPSHOT_TTL: '0',
    ...env,
  });
  const server = await startServer(config, { logger: false });
  const environment = await request(server, 'POST', '/environments', {
    name: `bench ${name}`,
    github_repos: [{ owner: 'acme', repo: 'app' }],
    setup_commands: ['test -f app/README.md'],
    docker_image: settings.image,
  });
  return { name, server, environmentId: environment.uid, runIds: [] };
}

async function oneRun(target: Subject): Promise<string> {
  const { run_id: runId } = await request(target.server, 'POST', '/agent/runs', {
    prompt: 'x',
    config: { environment_id: target.environmentId },
  });
  for (;;) {
    const run = await request(target.server, 'GET', `/agent/runs/${runId}`);
    if (['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED'].includes(run.state)) {
      if (run.state !== 'SUCCEEDED') throw new Error(`${target.name}: run ${runId} ended ${JSON.stringify(run)}`);
      return runId;
    }
    await sleep(10);
  }
}

async function startTimes(target: Subject): Promise<number[]> {
  const rows = await sql<{ ms: number }>`
    SELECT extract(epoch FROM a.occurred_at - r.occurred_at) * 1000 AS ms
    FROM run_events r JOIN run_events a ON a.run_id = r.run_id AND a.event_type = 'agent_started'
    WHERE r.event_type = 'oz_run_created' AND r.run_id = ANY(${target.runIds}::text[])`.execute(
    target.server.database.db,
  );
  return rows.rows.map((row) => Number(row.ms)).sort((a, b) => a - b);
}

async function main(): Promise<void> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-bench-sandbox-'));
  // A root server clones as its run user, who must be able to reach the repository and the data directories.
  fs.chmodSync(root, 0o755);
  const gitRoot = path.join(root, 'git');
  fs.mkdirSync(path.join(gitRoot, 'acme', 'app'), { recursive: true });
  const repo = path.join(gitRoot, 'acme', 'app');
  fs.writeFileSync(path.join(repo, 'README.md'), '# app\n');
  const git = (...args: string[]) => execFileSync('git', ['-C', repo, ...args], { stdio: 'ignore' });
  git('init', '-q');
  git('add', '.');
  git('-c', 'user.name=bench', '-c', 'user.email=bench@example.invalid', 'commit', '-qm', 'init');
  const gitBase = `file://${gitRoot}`;
  const subjects: Subject[] = [];
  try {
    subjects.push(await subject('bwrap', root, gitBase, { HANGAR_SANDBOX: 'bwrap' }));
    for (const [engine, host] of settings.engines)
      subjects.push(
        await subject(`container (${engine})`, root, gitBase, { HANGAR_SANDBOX: 'container', DOCKER_HOST: host }),
      );
    for (let i = 0; i < settings.warmup + settings.runs; i++) {
      for (const target of subjects) {
        const runId = await oneRun(target);
        if (i >= settings.warmup) target.runIds.push(runId);
      }
    }
    const baseline = percentile(await startTimes(subjects[0]!), 50);
    console.log(`create -> agent started, ${settings.runs} runs each (repository clone + one setup command)\n`);
    console.log('| sandbox | p50 | p99 | p50 over bwrap |');
    console.log('|---|---:|---:|---:|');
    for (const target of subjects) {
      const times = await startTimes(target);
      const p50 = percentile(times, 50);
      console.log(
        `| ${target.name} | ${p50.toFixed(0)} ms | ${percentile(times, 99).toFixed(0)} ms | ${target === subjects[0] ? '-' : `${p50 >= baseline ? '+' : ''}${(p50 - baseline).toFixed(0)} ms`} |`,
      );
    }
  } finally {
    for (const target of subjects) await target.server.stop().catch(() => undefined);
    fs.rmSync(root, { recursive: true, force: true });
  }
}

await main();
