// The engine's drain (in-process harness) with metrics served and scraped every second, and with traces exported
// to a local OTLP/HTTP receiver, against the same drain with both off: each in a process of its own, taking turns.
// Targets: at most 5% fewer runs/s with metrics, 15% with tracing. See bench/RESULTS.md#observability.
import { fileURLToPath } from 'node:url';
import { compareObservations, costs } from '../observability/compare.js';

const rounds = Number(process.env.BENCH_REPEATS || 3);
const { medians } = await compareObservations(
  fileURLToPath(new URL('./main.ts', import.meta.url)),
  { BENCH_DISPATCH_PARTS: 'inprocess', BENCH_REPEATS: '1' },
  rounds,
  (output) => {
    const match = /in-process harness: (\d+) runs\/s/.exec(output);
    if (!match) throw new Error(`no drain figure in: ${output}`);
    return Number(match[1]);
  },
);
const cost = costs(medians);
console.log(
  [
    '',
    '| Dispatch drain (in-process harness) | runs/s (median) | cost |',
    '|---|---|---|',
    `| observability off | ${Math.round(medians.off)} | |`,
    `| metrics served, scraped every 1 s | ${Math.round(medians.metrics)} | ${cost.metrics.toFixed(1)}% (target <= 5%) |`,
    `| metrics and traces (OTLP/HTTP to a local receiver) | ${Math.round(medians.tracing)} | ${cost.tracing.toFixed(1)}% (target <= 15%) |`,
  ].join('\n'),
);
