import { spawn } from 'node:child_process';
import type { Observation } from './observe.js';

export interface VariantFigure {
  observation: Observation;
  value: number;
}

/**
 * Runs `script` once per observation and round, in a process of its own each (the tracing SDK is process-wide),
 * taking turns so that a slow spell of the machine falls on every variant; `parse` reads one figure (higher is
 * better) from each run's output. Returns every figure and the median per observation.
 */
export async function compareObservations(
  script: string,
  env: Record<string, string>,
  rounds: number,
  parse: (output: string) => number,
): Promise<{ figures: VariantFigure[]; medians: Record<Observation, number> }> {
  const observations: Observation[] = ['off', 'metrics', 'tracing'];
  const figures: VariantFigure[] = [];
  for (let round = 1; round <= rounds; round++) {
    for (const observation of observations) {
      const output = await run(script, { ...env, BENCH_OBSERVE: observation });
      const value = parse(output);
      figures.push({ observation, value });
      console.log(`round ${round}/${rounds}, ${observation}: ${value.toFixed(1)}`);
    }
  }
  const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)]!;
  const medians = Object.fromEntries(
    observations.map((observation) => [
      observation,
      median(figures.filter((figure) => figure.observation === observation).map((figure) => figure.value)),
    ]),
  ) as Record<Observation, number>;
  return { figures, medians };
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

/** The cost of each observation against `off`, in percent of throughput. */
export function costs(medians: Record<Observation, number>): { metrics: number; tracing: number } {
  const cost = (value: number) => ((medians.off - value) / medians.off) * 100;
  return { metrics: cost(medians.metrics), tracing: cost(medians.tracing) };
}
