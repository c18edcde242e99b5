// The engine's drain (in-process harness) with metrics served and scraped every second, and with traces exported
// to a local OTLP/HTTP receiver, against the same drain with both off: each in a process of its own, taking turns.
// Targets: at most 5% fewer runs/s with metrics, 15% with tracing. See bench/RESULTS.md#observability.
import { fileURLToPath } from 'node:url';
import { compareObservations, table } from '../observability/compare.js';

const rounds = Number(process.env.BENCH_REPEATS || 5);
const { medians } = await compareObservations(
  fileURLToPath(new URL('./main.ts', import.meta.url)),
  { BENCH_DISPATCH_PARTS: 'inprocess', BENCH_REPEATS: '1' },
  rounds,
  (output) => {
    const match =
      /in-process harness: (\d+) runs\/s \(CPU per run: Node ([\d.]+) ms, PostgreSQL [\d.]+ ms, of which this database's backends ([\d.]+) ms/.exec(
        output,
      );
    if (!match) throw new Error(`no drain figures in: ${output}`);
    console.log(output.trim());
    return { rate: Number(match[1]), serverCpuMs: Number(match[2]), postgresCpuMs: Number(match[3]) };
  },
);
console.log(`\n${table('Dispatch drain (in-process harness)', 'run', medians, rounds)}`);
