// CLI start benchmark: how long a client verb takes, as a person types it, against the same machine's bare Node.
// Each measured command is a fresh process of the built CLI (`node dist/main.js ...`, what `hangar` runs):
//   --version         the verb that does nothing: what loading the CLI costs
//   runs list --json  one API call to a server started here (PGlite, 20 runs)
// Baseline, in the same rounds: `node -e 0` (Node's own start). Every process reports its CPU time (report-cpu.mjs).
// BENCH_CLI_OTHER=/path/to/other/dist/main.js measures another build too (a tree before a change), taking turns.
// Run with `npm run bench:cli` after `npm run build`; see bench/RESULTS.md#cli-start.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { loadConfig } from '../../src/config.js';
import { startServer } from '../../src/server.js';
import { apiRequest } from '../support/api.js';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');
const rounds = Number(process.env.BENCH_CLI_ROUNDS || 20);
const entries: Record<string, string> = { this: path.join(root, 'dist/main.js') };
if (process.env.BENCH_CLI_OTHER) entries.other = path.resolve(process.env.BENCH_CLI_OTHER);
for (const entry of Object.values(entries))
  if (!fs.existsSync(entry)) throw new Error(`${entry} does not exist: run npm run build first`);

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-bench-cli-'));
const apiKey = `hgr_bench_${randomBytes(16).toString('hex')}`;
const server = await startServer(
  loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    HANGAR_DATA_DIR: dataDir,
    HANGAR_BOOTSTRAP_API_KEY: apiKey,
    HANGAR_LOG_LEVEL: 'silent',
    DATABASE_URL: '',
  }),
  { role: 'api' },
);
for (let index = 0; index < 20; index++)
  await apiRequest(server, apiKey, 'POST', '/agent/runs', { prompt: `run ${index}` });

const cpuFile = path.join(dataDir, 'cpu');
const preload = path.join(import.meta.dirname, 'report-cpu.mjs');
const env = { ...process.env, HANGAR_URL: server.url, HANGAR_API_KEY: apiKey, BENCH_CPU_FILE: cpuFile };

/** One fresh process: its wall time as the caller sees it and the CPU it reported. */
async function measure(args: string[]): Promise<{ wallMs: number; cpuMs: number }> {
  fs.rmSync(cpuFile, { force: true });
  const started = performance.now();
  await run(process.execPath, ['--import', preload, ...args], { env });
  const wallMs = performance.now() - started;
  return { wallMs, cpuMs: Number(fs.readFileSync(cpuFile, 'utf8').trim()) };
}

const commands: Record<string, string[]> = { 'node -e 0 (baseline)': ['-e', '0'] };
for (const [name, entry] of Object.entries(entries)) {
  commands[`${name}: hangar --version`] = [entry, '--version'];
  commands[`${name}: hangar runs list --json`] = [entry, 'runs', 'list', '--json'];
}
const samples = new Map(Object.keys(commands).map((name) => [name, [] as { wallMs: number; cpuMs: number }[]]));
// One warm-up round (the file system cache), then the rounds, the order rotating so no command always goes first.
const names = Object.keys(commands);
for (let round = -1; round < rounds; round++) {
  const order = names.map((_, index) => names[(index + Math.max(round, 0)) % names.length]!);
  for (const name of order) {
    const sample = await measure(commands[name]!);
    if (round >= 0) samples.get(name)!.push(sample);
  }
}
await server.stop();
fs.rmSync(dataDir, { recursive: true, force: true });

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
};
console.log(`\nCLI start, ${rounds} rounds, Node ${process.version}, medians\n`);
console.log('| command | wall ms | CPU ms |\n|---|---:|---:|');
for (const [name, values] of samples)
  console.log(
    `| ${name} | ${median(values.map((value) => value.wallMs)).toFixed(0)} | ${median(values.map((value) => value.cpuMs)).toFixed(0)} |`,
  );
