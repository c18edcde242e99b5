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

/**
 * The paired cost of each observation: every round's throughput cost against the same round's `off`, the median
 * over the rounds. When the machine's speed moves from round to round, each variant's median mixes fast and slow
 * rounds; this compares only neighbours.
 */
export function pairedCosts(
  figures: Array<Pick<VariantFigure, 'observation' | 'round' | 'rate'>>,
): Record<'metrics' | 'tracing', number> {
  const costs = (observation: 'metrics' | 'tracing') =>
    median(
      figures
        .filter((figure) => figure.observation === observation)
        .flatMap((figure) => {
          const off = figures.find((other) => other.observation === 'off' && other.round === figure.round);
          return off ? [((off.rate - figure.rate) / off.rate) * 100] : [];
        }),
    );
  return { metrics: costs('metrics'), tracing: costs('tracing') };
}

/** The line that gives the paired costs under a table. */
export function pairedLine(figures: Array<Pick<VariantFigure, 'observation' | 'round' | 'rate'>>): string {
  const { metrics, tracing } = pairedCosts(figures);
  return `Paired throughput cost (median over the rounds of each round's cost against its own off): metrics ${metrics.toFixed(1)}%, tracing ${tracing.toFixed(1)}%`;
}

/** The markdown table of one comparison: medians of throughput and of CPU per unit of work, with the costs. */
export function table(title: string, unit: string, medians: Record<Observation, Measured>, rounds: number): string {
  const cost = costs(medians);
  const percent = (value: number) => `${value >= 0 ? '+' : ''}${value.toFixed(1)}%`;
  const row = (name: string, observation: Observation, target?: string) => {
    const measured = medians[observation];
    const paid = observation === 'off' ? undefined : cost[observation];
    return [
      name,
      Math.round(measured.rate),
      paid ? `${paid.rate.toFixed(1)}%${target ? ` (target <= ${target})` : ''}` : '',
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
    `| ${row('metrics served, scraped every 1 s', 'metrics', '5%')} |`,
    `| ${row('metrics and traces (OTLP/HTTP to a local receiver)', 'tracing', '15%')} |`,
  ].join('\n');
}
