import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import type { RunningServer } from '../../src/server.js';

/** What a benchmark process observes: nothing, metrics scraped every second, or metrics and traces exported. */
export type Observation = 'off' | 'metrics' | 'tracing';

export function observation(): Observation {
  const value = process.env.BENCH_OBSERVE || 'off';
  if (value !== 'off' && value !== 'metrics' && value !== 'tracing')
    throw new Error('BENCH_OBSERVE must be off, metrics or tracing');
  return value;
}

export interface Observer {
  /** The server's environment for this observation (HANGAR_METRICS_PORT, OTEL_EXPORTER_OTLP_ENDPOINT). */
  env: Record<string, string>;
  /** Starts scraping `server` once a second, as a demanding Prometheus would (the usual interval is 15 s or more). */
  watch(server: RunningServer): void;
  /** Stops scraping and the receiver; resolves with the receiver's report (`receiver: N spans, ...`) if there was one. */
  stop(): Promise<string | undefined>;
}

/**
 * Sets up what the benchmark's servers are observed by. Tracing exports to a real OTLP/HTTP receiver
 * (test/support/otlp-receiver.ts, which decodes every batch as a collector would) in a process of its own, so that
 * its work is not counted as the server's. The tracing SDK is process-wide, so each observation runs in a process
 * of its own too (bench/observability/compare.ts).
 */
export async function observer(kind: Observation): Promise<Observer> {
  if (kind === 'off') return { env: {}, watch: () => undefined, stop: async () => undefined };
  const receiver = kind === 'tracing' ? await startReceiver() : undefined;
  if (receiver) process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.url;
  const scrapers: NodeJS.Timeout[] = [];
  return {
    env: { HANGAR_METRICS_PORT: '0', ...(receiver ? { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url } : {}) },
    watch(server) {
      const url = `${server.metricsUrl}/metrics`;
      scrapers.push(
        setInterval(() => {
          void fetch(url)
            .then((response) => response.text())
            .catch(() => undefined);
        }, 1000),
      );
    },
    async stop() {
      for (const scraper of scrapers) clearInterval(scraper);
      return receiver?.stop();
    },
  };
}

/** The receiver's process; stopped by closing its standard input, when it reports what it received. */
async function startReceiver(): Promise<{ url: string; stop(): Promise<string | undefined> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('./receiver.ts', import.meta.url))], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  while (!output.includes('\n')) await once(child.stdout, 'data');
  return {
    url: output.split('\n')[0]!.trim(),
    async stop() {
      child.stdin.end();
      if (child.exitCode === null) await once(child, 'exit');
      return output.split('\n').find((line) => line.startsWith('receiver: '));
    },
  };
}
