import { type ChildProcess, fork } from 'node:child_process';
import type autocannon from 'autocannon';
import { watchCpu } from './machine.js';

export interface LoadSettings {
  connections: number;
  /** Measured seconds per target. */
  durationSeconds: number;
  /** Unmeasured seconds before each measurement: JIT, pool connections and caches warm up. */
  warmupSeconds: number;
  /** A measurement during which other processes used more than this much CPU (% of one core) is taken again. */
  maxOthersCpuPercent: number;
  /** Measurements per target at most, when the machine keeps being busy; the least disturbed one is kept. */
  attempts: number;
  /** Requests per second in all (a light, fixed load that shows service time without queueing); none = flat out. */
  overallRate?: number;
}

/** What one target receives: one request repeated, or a list that each connection cycles through. */
export interface Load {
  baseUrl: string;
  requests: autocannon.Request[];
  /** PIDs of the PostgreSQL backends serving this target, for its CPU per request (empty: not counted). */
  backends: () => Promise<number[]>;
  /** Work per request inside the load generator (unique IDs, signatures), for loads one fixed request cannot express. */
  hooks?: RequestHooksModule;
}

/**
 * A module the load generator imports (with `--import tsx`, so TypeScript is fine) whose default export is a
 * {@link RequestHooksFactory}. The factory is called once per generator with `config`; its hooks are attached to
 * every request of every run, and after each run (warm-up included) `tally()` is sent back to `onTally`, which
 * may throw to fail the measurement.
 */
export interface RequestHooksModule {
  /** Absolute `file:` URL of the module. */
  module: string;
  /** Passed to the factory; crosses the IPC channel, so JSON only. */
  config: unknown;
  onTally?: (tally: unknown) => void;
}

export interface RequestHooks {
  /** Called as autocannon builds each request (see its `setupRequest`): may change headers and body. */
  setupRequest?: (request: autocannon.Request) => autocannon.Request;
  /** Called with each complete answer (see autocannon's `onResponse`). */
  onResponse?: (status: number, body: string) => void;
  /** What the parent should know after a run (JSON), e.g. which answers came; the hooks then start afresh. */
  tally?: () => unknown;
}

export type RequestHooksFactory = (config: any) => RequestHooks | Promise<RequestHooks>;

export interface Figures {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** CPU milliseconds per request: this process (Node, and PGlite if embedded) and our PostgreSQL backends. */
  serverCpuMs: number | undefined;
  postgresCpuMs: number | undefined;
  /** CPU used meanwhile by unrelated processes, in % of one core (noise). */
  othersCpuPercent: number | undefined;
}

/** The load generator as a child process: its CPU is then neither the servers' nor mistaken for noise. */
class LoadGenerator {
  private constructor(private readonly child: ChildProcess) {}

  static async start(): Promise<LoadGenerator> {
    const child = fork(new URL('./load-generator.ts', import.meta.url), {
      execArgv: ['--import', 'tsx'],
      stdio: 'inherit',
    });
    await new Promise<void>((resolve, reject) => {
      child.once('message', () => resolve());
      child.once('exit', (code) => reject(new Error(`load generator exited with ${code}`)));
    });
    return new LoadGenerator(child);
  }

  get pid(): number {
    return this.child.pid!;
  }

  fire(options: autocannon.Options, hooks?: RequestHooksModule): Promise<autocannon.Result> {
    return new Promise((resolve, reject) => {
      this.child.once('message', (message: { result?: autocannon.Result; tally?: unknown; error?: string }) => {
        if (!message.result) return reject(new Error(message.error));
        try {
          hooks?.onTally?.(message.tally);
        } catch (error) {
          return reject(error); // onTally may refuse what it saw (say, an unexpected status): the run fails.
        }
        resolve(message.result);
      });
      this.child.send({ options, hooks: hooks && { module: hooks.module, config: hooks.config } });
    });
  }

  stop(): void {
    this.child.kill();
  }
}

async function measureOnce(generator: LoadGenerator, load: Load, settings: LoadSettings): Promise<Figures> {
  const backends = await load.backends();
  const stopWatch = watchCpu(generator.pid, backends);
  const result = await generator.fire(autocannonOptions(load, settings, settings.durationSeconds), load.hooks);
  const cpu = stopWatch?.();
  // Any error or non-2xx answer fails the benchmark rather than flattering it.
  if (result.errors > 0 || result.timeouts > 0 || result.non2xx > 0) {
    throw new Error(
      `${load.baseUrl}${load.requests[0]?.path ?? ''}: ${result.errors} errors, ${result.timeouts} timeouts, ` +
        `${result.non2xx} non-2xx (status counts ${JSON.stringify(result.statusCodeStats)})`,
    );
  }
  const requests = result.requests.total;
  return {
    requestsPerSecond: requests / result.duration,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    serverCpuMs: cpu && (cpu.serverSeconds * 1000) / requests,
    postgresCpuMs: cpu && backends.length > 0 ? (cpu.ourBackendSeconds * 1000) / requests : undefined,
    othersCpuPercent: cpu?.othersPercent,
  };
}

function autocannonOptions(load: Load, settings: LoadSettings, seconds: number): autocannon.Options {
  return {
    url: load.baseUrl,
    connections: settings.connections,
    duration: seconds,
    requests: load.requests,
    ...(settings.overallRate ? { overallRate: settings.overallRate } : {}),
  };
}

/**
 * Warms up, then measures. On a small shared machine another process's burst can halve a figure, so a
 * measurement taken while others were busy is repeated, and the least disturbed attempt is kept.
 */
export async function measure(load: Load, settings: LoadSettings): Promise<Figures> {
  const generator = await LoadGenerator.start();
  try {
    if (settings.warmupSeconds > 0)
      await generator.fire(autocannonOptions(load, settings, settings.warmupSeconds), load.hooks);
    let best: Figures | undefined;
    for (let attempt = 1; attempt <= Math.max(1, settings.attempts); attempt++) {
      const figures = await measureOnce(generator, load, settings);
      const disturbance = figures.othersCpuPercent ?? 0;
      if (!best || disturbance < (best.othersCpuPercent ?? 0)) best = figures;
      if (disturbance <= settings.maxOthersCpuPercent) break;
      console.log(`  (other processes used ${Math.round(disturbance)}% of a core during that measurement)`);
    }
    return best!;
  } finally {
    generator.stop();
  }
}
