/**
 * Spawn benchmark (issue 54): the event loop's delay while a process grown to a server's size starts 50 processes a
 * second, through Node's own spawn (a fork of this process, on its event loop's thread) and through Hangar's
 * spawner (started at boot, while small), the two taking turns in the same run. p50, p99 and max of
 * perf_hooks.monitorEventLoopDelay. Target: p99 under 2 ms at both sizes through the spawner.
 *
 *   BENCH_SPAWN_SIZES_MB   heap sizes to grow to (default 300,1000)
 *   BENCH_SPAWN_RATE       processes started per second (default 50)
 *   BENCH_SPAWN_SECONDS    seconds per measurement (default 10)
 *
 * Run with a heap that holds the largest size: `npm run bench:spawn` sets --max-old-space-size.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { spawnProcess, startSpawner, stopSpawner } from '../../src/platform/spawn/index.js';

const list = (name: string, fallback: string) => (process.env[name] || fallback).split(',').map(Number);
const settings = {
  sizesMb: list('BENCH_SPAWN_SIZES_MB', '300,1000'),
  rate: Number(process.env.BENCH_SPAWN_RATE || 50),
  seconds: Number(process.env.BENCH_SPAWN_SECONDS || 10),
};

// At boot, before anything is grown: as the server does.
startSpawner();

/** Grown as a server's heap grows: many small objects (what fork has to copy the page tables of). */
const held: unknown[] = [];
function growTo(megabytes: number): void {
  while (process.memoryUsage().heapUsed < megabytes * 1024 * 1024)
    held.push(Array.from({ length: 100_000 }, (_, i) => ({ i, label: `row ${i}` })));
}

type Way = 'node' | 'spawner';
const start = (way: Way) =>
  way === 'node'
    ? spawn('/bin/true', [], { stdio: 'ignore' })
    : spawnProcess('/bin/true', [], { stdio: ['ignore', 'ignore', 'ignore'] });

interface Figures {
  p50: number;
  p99: number;
  max: number;
  systemMsPerSpawn: number;
}

/** Starts `rate` processes a second for `seconds`, and reads the loop's delay over that time (ms). */
async function measure(way: Way): Promise<Figures> {
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  const exits: Promise<unknown>[] = [];
  const cpu = process.cpuUsage();
  histogram.enable();
  const count = settings.rate * settings.seconds;
  const began = performance.now();
  for (let i = 0; i < count; i++) {
    const due = began + (i * 1000) / settings.rate;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    exits.push(once(start(way), 'exit'));
  }
  await Promise.all(exits);
  histogram.disable();
  const used = process.cpuUsage(cpu);
  const ms = (ns: number) => ns / 1e6;
  return {
    p50: ms(histogram.percentile(50)),
    p99: ms(histogram.percentile(99)),
    max: ms(histogram.max),
    systemMsPerSpawn: used.system / 1000 / count,
  };
}

const rows: string[] = [];
for (const size of settings.sizesMb) {
  growTo(size);
  global.gc?.();
  const rss = Math.round(process.memoryUsage().rss / 1024 / 1024);
  // Taking turns, node first: a slow spell of the machine falls on both.
  for (const way of ['node', 'spawner', 'node', 'spawner'] as const) {
    const f = await measure(way);
    const line = `| ${size} MB heap (${rss} MB RSS) | ${way === 'node' ? "Node's spawn" : 'spawner'} | ${f.p50.toFixed(2)} ms | ${f.p99.toFixed(2)} ms | ${f.max.toFixed(1)} ms | ${f.systemMsPerSpawn.toFixed(2)} ms |`;
    console.log(line);
    rows.push(line);
  }
}
await stopSpawner();
console.log(
  `\nspawn: ${settings.rate} processes/s for ${settings.seconds} s per row\n\n| server | started by | loop delay p50 | p99 | max | server system CPU per spawn |\n|---|---|---:|---:|---:|---:|\n${rows.join('\n')}`,
);
