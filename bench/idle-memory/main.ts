// Idle memory benchmark (issue 26 item 12): the server started as a person starts it, `npm start` on the embedded
// database (PGlite) with the example operator file, and the resident memory of the whole process tree (npm, the
// shell npm's script runs in if any, node, run processes) read from /proc at each step. Baselines measured in the
// same run: a bare `node` process that does nothing, and `node dist/main.js serve` without npm.
// Steps per server: ready after the first start (the database initialised), idle 30 s later, a first run
// (example echo harness) ended and 30 s of idle after it, then a restart on the same data directory. `npm start` runs
// `node --max-semi-space-size=2 dist/main.js serve`; the bare command is measured without the flag.
// Target: <= 350 MB idle. Run with `npm run bench:memory` after `npm run build`; see bench/RESULTS.md.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { type TreeMemory, treeMemory } from './process-tree.js';

const root = path.resolve(import.meta.dirname, '../..');
const IDLE_MS = Number(process.env.BENCH_IDLE_SECONDS || 30) * 1000;
const API_KEY = `hgr_bench_${randomUUID().replace(/-/g, '')}`;

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });

interface Started {
  child: ChildProcess;
  url: string;
  exited: Promise<void>;
  /** The highest RSS of the whole tree seen while it started (sampled every 100 ms: the initdb child included). */
  peakTreeMb: number;
}

async function start(command: string[], dataDir: string): Promise<Started> {
  const port = await freePort();
  const child = spawn(command[0]!, command.slice(1), {
    cwd: root,
    env: {
      ...process.env,
      HOST: '127.0.0.1',
      PORT: String(port),
      HANGAR_DATA_DIR: dataDir,
      HANGAR_CONFIG: path.join(root, 'examples/hangar.yaml'),
      HANGAR_BOOTSTRAP_API_KEY: API_KEY,
      HANGAR_LOG_LEVEL: 'warn',
      // Measured apart from any DATABASE_URL of the shell: the embedded database is the point.
      DATABASE_URL: '',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  let peakTreeMb = 0;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${command.join(' ')} exited with ${child.exitCode}`);
    peakTreeMb = Math.max(peakTreeMb, treeMemory(child.pid!).rssMb);
    const ready = await fetch(`${url}/readyz`).then(
      (response) => response.ok,
      () => false,
    );
    if (ready) return { child, url, exited, peakTreeMb };
    await sleep(100);
  }
}

async function stop(started: Started): Promise<void> {
  started.child.kill('SIGTERM');
  await started.exited;
}

async function api(url: string, method: string, route: string, body?: unknown): Promise<any> {
  const response = await fetch(`${url}/api/v1${route}`, {
    method,
    headers: { authorization: `Bearer ${API_KEY}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  if (!response.ok) throw new Error(`${method} ${route}: ${response.status} ${await response.text()}`);
  return response.json();
}

async function firstRun(url: string): Promise<string> {
  const { run_id: runId } = await api(url, 'POST', '/agent/runs', { prompt: 'Say hello' });
  for (;;) {
    const run = await api(url, 'GET', `/agent/runs/${runId}`);
    if (['SUCCEEDED', 'FAILED', 'ERROR', 'BLOCKED', 'CANCELLED'].includes(run.state)) return run.state;
    await sleep(200);
  }
}

const rows: { subject: string; step: string; memory: TreeMemory }[] = [];
const peaks: string[] = [];
function record(subject: string, step: string, pid: number): void {
  const memory = treeMemory(pid);
  rows.push({ subject, step, memory });
  const parts = memory.processes.map((p) => `${p.name} ${p.rssMb.toFixed(0)}`).join(' + ');
  console.error(
    `${subject} / ${step}: RSS ${memory.rssMb.toFixed(1)} MB (${parts}), PSS ${memory.pssMb.toFixed(1)} MB`,
  );
}

async function measureServer(subject: string, command: string[]): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-bench-memory-'));
  try {
    let server = await start(command, dataDir);
    record(subject, 'ready, first start', server.child.pid!);
    const peak = Math.max(...treeMemory(server.child.pid!).processes.map((p) => p.peakRssMb));
    peaks.push(
      `${subject}: while the first start initialised the database, the tree's RSS peaked at ${server.peakTreeMb.toFixed(0)} MB (sampled), the server process's own at ${peak.toFixed(0)} MB`,
    );
    console.error(peaks.at(-1));
    await sleep(IDLE_MS);
    record(subject, `idle ${IDLE_MS / 1000} s after the first start`, server.child.pid!);
    const state = await firstRun(server.url);
    if (state !== 'SUCCEEDED') throw new Error(`the first run ended ${state}`);
    record(subject, 'first run ended', server.child.pid!);
    await sleep(IDLE_MS);
    record(subject, `idle ${IDLE_MS / 1000} s after the first run`, server.child.pid!);
    await stop(server);
    server = await start(command, dataDir);
    await sleep(IDLE_MS);
    record(subject, `idle ${IDLE_MS / 1000} s after a restart`, server.child.pid!);
    await stop(server);
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  if (!fs.existsSync(path.join(root, 'dist/main.js'))) throw new Error('run `npm run build` first');
  const bare = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  await sleep(1000);
  record('bare node (baseline)', 'idle', bare.pid!);
  bare.kill();
  await measureServer('npm start', ['npm', 'start']);
  await measureServer('node dist/main.js serve', [process.execPath, 'dist/main.js', 'serve']);

  console.log(
    `\nload average at the end: ${os
      .loadavg()
      .map((load) => load.toFixed(1))
      .join(' ')}`,
  );
  console.log('| server | step | RSS of the tree, MB | PSS of the tree, MB | processes (RSS, MB) |');
  console.log('|---|---|---:|---:|---|');
  for (const { subject, step, memory } of rows) {
    const parts = memory.processes.map((p) => `${p.name} ${p.rssMb.toFixed(0)}`).join(', ');
    console.log(`| ${subject} | ${step} | ${memory.rssMb.toFixed(0)} | ${memory.pssMb.toFixed(0)} | ${parts} |`);
  }
}

await main();
