// The runs API (POST create, GET list) with metrics served and scraped every second, and with traces exported to a
// local OTLP/HTTP receiver, against the same server with both off: each in a process of its own, taking turns.
// Targets: at most 5% less throughput with metrics, 15% with tracing. See bench/RESULTS.md#observability.
import { fileURLToPath } from 'node:url';
import { compareObservations, mediansOf, pairedLine, table } from '../observability/compare.js';

const rounds = Number(process.env.BENCH_REPEATS || 15);
const script = fileURLToPath(new URL('./observed.ts', import.meta.url));
const figures = (name: string) => (output: string) => {
  const match = new RegExp(
    `${name}: ([\\d.]+) req/s, ([\\d.]+) ms server CPU, ([\\d.]+) ms PostgreSQL CPU per request`,
  ).exec(output);
  if (!match) throw new Error(`no ${name} figures in: ${output}`);
  return { rate: Number(match[1]), serverCpuMs: Number(match[2]), postgresCpuMs: Number(match[3]) };
};
// Both scenarios come from the same runs: create is the row the targets apply to, list is shown beside it.
const create = await compareObservations(script, {}, rounds, (output) => {
  console.log(output.trim());
  return figures('create')(output);
});
const list = mediansOf(create.figures.map((figure) => ({ ...figure, ...figures('list')(figure.output) })));
console.log(
  `\n${table('Runs API, POST /api/v1/agent/runs, 20 connections', 'request', create.medians, rounds)}\n${pairedLine(create.figures)}`,
);
console.log(`\n${table('Runs API, GET /api/v1/agent/runs?limit=20, 20 connections', 'request', list, rounds)}`);
