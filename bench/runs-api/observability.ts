// The runs API (POST create, GET list) with metrics served and scraped every second, and with traces exported to a
// local OTLP/HTTP receiver, against the same server with both off: each in a process of its own, taking turns.
// Targets: at most 5% less throughput with metrics, 15% with tracing. See bench/RESULTS.md#observability.
import { fileURLToPath } from 'node:url';
import { compareObservations, costs } from '../observability/compare.js';

const rounds = Number(process.env.BENCH_REPEATS || 3);
const script = fileURLToPath(new URL('./observed.ts', import.meta.url));
const figure = (name: string) => (output: string) => {
  const match = new RegExp(`${name}: ([\\d.]+) req/s`).exec(output);
  if (!match) throw new Error(`no ${name} figure in: ${output}`);
  return Number(match[1]);
};
// Both figures come from the same runs: the create one is compared, the list one printed beside it.
const { medians } = await compareObservations(script, {}, rounds, (output) => {
  console.log(output.trim());
  return figure('create')(output);
});
const cost = costs(medians);
console.log(
  [
    '',
    '| Runs API, POST /agent/runs, 20 connections | req/s (median) | cost |',
    '|---|---|---|',
    `| observability off | ${Math.round(medians.off)} | |`,
    `| metrics served, scraped every 1 s | ${Math.round(medians.metrics)} | ${cost.metrics.toFixed(1)}% (target <= 5%) |`,
    `| metrics and traces (OTLP/HTTP to a local receiver) | ${Math.round(medians.tracing)} | ${cost.tracing.toFixed(1)}% (target <= 15%) |`,
  ].join('\n'),
);
