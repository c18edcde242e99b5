import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { stopChild } from './processes.js';
import { freePort } from './server.js';

/** Debian's Prometheus (`apt-get install prometheus`); PROMETHEUS_BIN overrides where it is. */
const PROMETHEUS = process.env.PROMETHEUS_BIN ?? '/usr/bin/prometheus';

export function prometheusInstalled(): boolean {
  return fs.existsSync(PROMETHEUS);
}

/** One scrape target: where /metrics is, and the bearer token it wants (if any). */
export interface ScrapeTarget {
  /** e.g. http://127.0.0.1:41234 */
  url: string;
  path?: string;
  token?: string;
}

export interface TestPrometheus {
  url: string;
  /** An instant query through the HTTP API: the result vector's samples. */
  query(expression: string): Promise<Array<{ metric: Record<string, string>; value: number }>>;
  /** Waits for the next scrape of every target to have happened (a scrape that started after this call). */
  nextScrape(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A real Prometheus on a free port with its own configuration and data directory, scraping `target` every
 * second. Its HTTP API answers queries over what it scraped.
 */
export async function startPrometheus(target: ScrapeTarget): Promise<TestPrometheus> {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-prometheus-'));
  const port = await freePort();
  const address = new URL(target.url);
  const config = [
    'global:',
    '  scrape_interval: 1s',
    '  scrape_timeout: 1s',
    'scrape_configs:',
    '  - job_name: hangar',
    `    metrics_path: ${target.path ?? '/metrics'}`,
    `    scheme: ${address.protocol.replace(':', '')}`,
    ...(target.token ? ['    authorization:', '      type: Bearer', `      credentials: ${target.token}`] : []),
    '    static_configs:',
    `      - targets: ['${address.host}']`,
    '',
  ].join('\n');
  fs.writeFileSync(path.join(directory, 'prometheus.yml'), config);
  let output = '';
  const child: ChildProcess = spawn(
    PROMETHEUS,
    [
      `--config.file=${path.join(directory, 'prometheus.yml')}`,
      `--storage.tsdb.path=${path.join(directory, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null) await stopChild(child);
    fs.rmSync(directory, { recursive: true, force: true });
  };
  const api = async (pathAndQuery: string): Promise<any> => {
    const response = await fetch(`${url}${pathAndQuery}`);
    const body = (await response.json()) as { status: string; data: any; error?: string };
    if (body.status !== 'success') throw new Error(`prometheus ${pathAndQuery}: ${body.error}`);
    return body.data;
  };
  const scrapes = async (): Promise<number[]> => {
    const data = await api('/api/v1/targets?state=active');
    return (data.activeTargets as Array<{ lastScrape: string; health: string }>).map((target) =>
      target.health === 'up' ? Date.parse(target.lastScrape) : 0,
    );
  };
  try {
    await until(async () => {
      if (child.exitCode !== null) throw new Error(`prometheus exited with ${child.exitCode}: ${output}`);
      return fetch(`${url}/-/ready`).then(
        (response) => response.ok,
        () => false,
      );
    }, `prometheus ready (${output})`);
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    url,
    async query(expression) {
      const data = await api(`/api/v1/query?query=${encodeURIComponent(expression)}`);
      return (data.result as Array<{ metric: Record<string, string>; value: [number, string] }>).map((sample) => ({
        metric: sample.metric,
        value: Number(sample.value[1]),
      }));
    },
    async nextScrape() {
      const asked = Date.now();
      await until(
        async () => {
          const last = await scrapes();
          return last.length > 0 && last.every((at) => at > asked);
        },
        `a scrape after ${new Date(asked).toISOString()} (${output})`,
      );
    },
    stop,
  };
}

/** Polls `check` (an external process's state: there is no event to wait on) until it holds. */
async function until(check: () => Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}
