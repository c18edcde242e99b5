// The engine's drain with metrics served and scraped every second, and with traces exported to a local OTLP/HTTP
// receiver, against the same drain with both off: each in a process of its own, taking turns.
// Targets: at most 5% fewer runs/s with metrics, 15% with tracing. See bench/RESULTS.md#observability.
//
//   BENCH_OBSERVE_HARNESS  inprocess (default: the engine alone, a harness that ends at once) or command (an
//                          operator command harness, `/bin/true` in the sandbox: one process per run)
import { fileURLToPath } from 'node:url';
import { compareObservations, mediansOf, pairedLine, table } from '../observability/compare.js';

const rounds = Number(process.env.BENCH_REPEATS || 15);
const harness = process.env.BENCH_OBSERVE_HARNESS || 'inprocess';
if (harness !== 'inprocess' && harness !== 'command')
  throw new Error('BENCH_OBSERVE_HARNESS must be inprocess or command');
// In-process, PostgreSQL's CPU is this drain's database's backends; with the command harness, all of PostgreSQL's.
const drainFigures =
  harness === 'inprocess'
    ? /in-process harness: (\d+) runs\/s \(CPU per run: Node ([\d.]+) ms, PostgreSQL [\d.]+ ms, of which this database's backends ([\d.]+) ms/
    : /command harness: (\d+) runs\/s \(CPU per run: Node ([\d.]+) ms, PostgreSQL ([\d.]+) ms/;
// 20,000 runs in-process by default: a drain of 5,000 lasts about 3 s, most of it the process's first seconds, when
// the JIT is still compiling what every run goes through (and tracing adds the SDK and its exporter to that).
const runs = process.env.BENCH_DISPATCH_RUNS || (harness === 'inprocess' ? '20000' : '2000');
const { figures, medians } = await compareObservations(
  fileURLToPath(new URL('./main.ts', import.meta.url)),
  { BENCH_DISPATCH_PARTS: harness, BENCH_REPEATS: '1', BENCH_DISPATCH_RUNS: runs },
  rounds,
  (output) => {
    const match = drainFigures.exec(output);
    if (!match) throw new Error(`no drain figures in: ${output}`);
    console.log(output.trim());
    return { rate: Number(match[1]), serverCpuMs: Number(match[2]), postgresCpuMs: Number(match[3]) };
  },
);
const title = harness === 'inprocess' ? 'Dispatch drain (in-process harness)' : 'Dispatch drain (command harness)';
console.log(`\n${table(`${title}, ${runs} runs`, 'run', medians, rounds)}\n${pairedLine(figures)}`);
// The same drains' throughput after their first quarter of runs (the CPU columns stay the whole drain's).
const rest = figures.map((figure) => ({ ...figure, rate: Number(/the rest (\d+) runs\/s/.exec(figure.output)![1]) }));
console.log(
  `\n${table(`${title}, runs/s after the first quarter of the runs`, 'run', mediansOf(rest), rounds)}\n${pairedLine(rest)}`,
);
