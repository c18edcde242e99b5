import { spawn } from 'node:child_process';
import type { Observation } from './observe.js';

/** What one run of a variant measured: its throughput (higher is better) and its CPU per unit of work. */
export interface Measured {
  /** Requests or runs per second. */
  rate: number;
  /** CPU milliseconds of the server's process per request or run. */
  serverCpuMs: number;
  /** CPU milliseconds of the server's PostgreSQL backends per request or run. */
  postgresCpuMs: number;
  /** The receiver's CPU in % of one core over its life (tracing only). */
  receiverCpuPercent?: number;
}

export interface VariantFigure extends Measured {
  observation: Observation;
  round: number;
  /** What the run printed (for the figures of other scenarios measured in the same run). */
  output: string;
}

const OBSERVATIONS: Observation[] = ['off', 'metrics', 'tracing'];

/** The issue's targets: at most this much throughput lost, in percent. */
const TARGETS = { metrics: 5, tracing: 15 } as const;

/**
 * Runs `script` once per observation and round, in a process of its own each (the tracing SDK is process-wide),
 * taking turns so that a slow spell of the machine falls on every variant; the order rotates each round (off,
 * metrics, tracing; then metrics, tracing, off; ...) so that no variant always follows the same one. `parse` reads
 * the figures from each run's output. Returns every figure and the median of each figure per observation.
 */
export async function compareObservations(
  script: string,
  env: Record<string, string>,
  rounds: number,
  parse: (output: string) => Omit<Measured, 'receiverCpuPercent'>,
): Promise<{ figures: VariantFigure[]; medians: Record<Observation, Measured> }> {
  const figures: VariantFigure[] = [];
  for (let round = 1; round <= rounds; round++) {
    const order = OBSERVATIONS.map((_, index) => OBSERVATIONS[(index + round - 1) % OBSERVATIONS.length]!);
    for (const observation of order) {
      const output = await run(script, { ...env, BENCH_OBSERVE: observation });
      const figure: VariantFigure = { observation, round, output, ...parse(output), ...receiverCpu(output) };
      figures.push(figure);
      const receiver =
        figure.receiverCpuPercent === undefined ? '' : `, receiver ${figure.receiverCpuPercent.toFixed(0)}% of a core`;
      console.log(
        `round ${round}/${rounds}, ${observation}: ${figure.rate.toFixed(1)}/s, server CPU ${figure.serverCpuMs.toFixed(3)} ms, ` +
          `PostgreSQL CPU ${figure.postgresCpuMs.toFixed(3)} ms${receiver}`,
      );
    }
  }
  return { figures, medians: mediansOf(figures) };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** The median of each figure per observation (of an even count, the mean of the middle two). */
export function mediansOf(figures: Array<Measured & { observation: Observation }>): Record<Observation, Measured> {
  return Object.fromEntries(
    OBSERVATIONS.map((observation) => {
      const mine = figures.filter((figure) => figure.observation === observation);
      const receiver = mine.flatMap((figure) =>
        figure.receiverCpuPercent === undefined ? [] : [figure.receiverCpuPercent],
      );
      return [
        observation,
        {
          rate: median(mine.map((figure) => figure.rate)),
          serverCpuMs: median(mine.map((figure) => figure.serverCpuMs)),
          postgresCpuMs: median(mine.map((figure) => figure.postgresCpuMs)),
          ...(receiver.length > 0 ? { receiverCpuPercent: median(receiver) } : {}),
        },
      ];
    }),
  ) as Record<Observation, Measured>;
}

/** The receiver's report (`receiver: N spans, M ms CPU in S s`) as % of one core, when the output has one. */
function receiverCpu(output: string): { receiverCpuPercent?: number } {
  const match = /receiver: \d+ spans, (\d+) ms CPU in ([\d.]+) s/.exec(output);
  return match ? { receiverCpuPercent: (Number(match[1]) / 1000 / Number(match[2])) * 100 } : {};
}

function run(script: string, env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', script], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolve(output) : reject(new Error(`${script} exited ${code}: ${output}`)),
    );
  });
}

/** The cost of each observation against `off`, in percent: of throughput, and of server CPU per unit of work. */
export function costs(
  medians: Record<Observation, Measured>,
): Record<'metrics' | 'tracing', { rate: number; cpu: number }> {
  const rate = (value: number) => ((medians.off.rate - value) / medians.off.rate) * 100;
  const cpu = (value: number) => ((value - medians.off.serverCpuMs) / medians.off.serverCpuMs) * 100;
  return {
    metrics: { rate: rate(medians.metrics.rate), cpu: cpu(medians.metrics.serverCpuMs) },
    tracing: { rate: rate(medians.tracing.rate), cpu: cpu(medians.tracing.serverCpuMs) },
  };
}

/** One observation's paired cost: its median over the rounds, and the confidence interval of that median. */
export interface PairedCost {
  median: number;
  rounds: number;
  /** The interval's bounds and how sure it is (0.96: it holds the true median 96 times in 100). */
  low: number;
  high: number;
  confidence: number;
}

/**
 * The paired cost of each observation: every round's throughput cost against the same round's `off`, the median
 * over the rounds. When the machine's speed moves from round to round, each variant's median mixes fast and slow
 * rounds; this compares only neighbours.
 */
export function pairedCosts(
  figures: Array<Pick<VariantFigure, 'observation' | 'round' | 'rate'>>,
): Record<'metrics' | 'tracing', PairedCost> {
  const costs = (observation: 'metrics' | 'tracing') =>
    medianWithInterval(
      figures
        .filter((figure) => figure.observation === observation)
        .flatMap((figure) => {
          const off = figures.find((other) => other.observation === 'off' && other.round === figure.round);
          return off ? [((off.rate - figure.rate) / off.rate) * 100] : [];
        }),
    );
  return { metrics: costs('metrics'), tracing: costs('tracing') };
}

/**
 * A median with its distribution-free confidence interval: the (k+1)-th smallest and largest of the n values. Each
 * value falls below the true median with probability 1/2, so the (k+1)-th smallest lies above it only when at most
 * k of them fall below: P(Binomial(n, 1/2) <= k), the same on the other side; k is the largest that keeps this at
 * 2.5% or less. It assumes nothing about how the rounds scatter (not normally, on a shared machine: a slow spell
 * makes one round an outlier), but it needs rounds: 5 give at best 94% (the smallest and largest), 15 give 96%.
 */
export function medianWithInterval(values: number[]): PairedCost {
  const sorted = [...values].sort((a, b) => a - b);
  const n = sorted.length;
  // below[i]: the chance that at most i of n values fall below the median, P(Binomial(n, 1/2) <= i).
  const below: number[] = [];
  let term = 0.5 ** n;
  let sum = 0;
  for (let i = 0; i < n; i++) {
    sum += term;
    below.push(sum);
    term = (term * (n - i)) / (i + 1);
  }
  let k = 0;
  while (k + 1 < n / 2 && below[k + 1]! <= 0.025) k++;
  return {
    median: median(sorted),
    rounds: n,
    low: sorted[k] ?? Number.NaN,
    high: sorted[n - 1 - k] ?? Number.NaN,
    confidence: Math.max(0, 1 - 2 * (below[k] ?? 1)),
  };
}

/** What a paired cost says of its target: met (the whole interval at or below it), not met (above it), or neither. */
export function verdict(cost: PairedCost, target: number): 'met' | 'not met' | 'undecided' {
  if (cost.high <= target) return 'met';
  if (cost.low > target) return 'not met';
  return 'undecided';
}

/** The line that gives the paired costs under a table, with their intervals and what they say of the targets. */
export function pairedLine(figures: Array<Pick<VariantFigure, 'observation' | 'round' | 'rate'>>): string {
  const { metrics, tracing } = pairedCosts(figures);
  const said = (cost: PairedCost, target: number) =>
    `${cost.median.toFixed(1)}% (${Math.round(cost.confidence * 100)}% interval ${cost.low.toFixed(1)} to ` +
    `${cost.high.toFixed(1)}%: ${verdict(cost, target)}, target ${target}%)`;
  return `Paired throughput cost (median over ${metrics.rounds} rounds of each round's cost against its own off): metrics ${said(metrics, TARGETS.metrics)}, tracing ${said(tracing, TARGETS.tracing)}`;
}

/** The markdown table of one comparison: medians of throughput and of CPU per unit of work, with the costs. */
export function table(title: string, unit: string, medians: Record<Observation, Measured>, rounds: number): string {
  const cost = costs(medians);
  const percent = (value: number) => `${value >= 0 ? '+' : ''}${value.toFixed(1)}%`;
  const row = (name: string, observation: Observation, target?: number) => {
    const measured = medians[observation];
    const paid = observation === 'off' ? undefined : cost[observation];
    return [
      name,
      Math.round(measured.rate),
      paid ? `${paid.rate.toFixed(1)}%${target ? ` (target <= ${target}%)` : ''}` : '',
      measured.serverCpuMs.toFixed(3),
      paid ? percent(paid.cpu) : '',
      measured.postgresCpuMs.toFixed(3),
      measured.receiverCpuPercent === undefined ? '' : `${measured.receiverCpuPercent.toFixed(0)}%`,
    ].join(' | ');
  };
  return [
    `| ${title}, medians of ${rounds} rounds | ${unit}s/s | throughput cost | server CPU ms per ${unit} | server CPU cost | PostgreSQL CPU ms per ${unit} | receiver CPU (% of a core) |`,
    '|---|---:|---:|---:|---:|---:|---:|',
    `| ${row('observability off', 'off')} |`,
    `| ${row('metrics served, scraped every 1 s', 'metrics', TARGETS.metrics)} |`,
    `| ${row('metrics and traces (OTLP/HTTP to a local receiver)', 'tracing', TARGETS.tracing)} |`,
  ].join('\n');
}
