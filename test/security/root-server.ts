/**
 * A real `hangar serve` process for the sandbox security tests, started the way a careless launcher would: as
 * whoever runs the tests (root on the CI machine) and with an extra descriptor left open without close-on-exec
 * (fd 9), which must not reach any run. Its log (level warn) is kept.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { resolveSandboxMode } from '../../src/execution/sandbox/index.js';
import { generateApiKey } from '../../src/platform/crypto.js';
import { listensOn } from '../support/listening.js';
import { databaseEnv, stopChild } from '../support/processes.js';
import { createTestDatabase, freePort, type TestDatabase } from '../support/server.js';
import { HANGAR_FROM_SOURCES } from '../support/typescript.js';

/** Why these tests cannot run here (they need what CI has: root, and a working bwrap), or false. */
export function rootServerSkip(): string | false {
  if (process.getuid?.() !== 0) return 'needs root: what is tested is what a root server does to its runs';
  return resolveSandboxMode(undefined).mode.kind !== 'bwrap' ? 'bwrap does not work on this machine' : false;
}

/** The descriptor the server inherits and must not pass on. */
export const INHERITED_FD = 9;

export interface RootServer {
  url: string;
  apiKey: string;
  dataDir: string;
  /** Everything the server wrote to stdout and stderr so far. */
  log(): string;
  request(method: string, urlPath: string, body?: unknown): Promise<{ status: number; body: any }>;
  stop(): Promise<void>;
}

/** Starts the server with one command harness, `probe`: `bash -c script`, plain-text output. */
export async function startRootServer(probe: { script: string; network: boolean }): Promise<RootServer> {
  const database: TestDatabase = await createTestDatabase();
  const configDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-config-'));
  const configFile = path.join(configDir, 'hangar.yaml');
  fs.writeFileSync(
    configFile,
    YAML.stringify({
      default_harness: 'probe',
      harnesses: {
        probe: { command: ['bash', '-c', probe.script], output: 'text', network: probe.network, timeout_minutes: 2 },
      },
    }),
  );
  const apiKey = generateApiKey();
  const port = await freePort();
  let output = '';
  const stdio: Array<'pipe' | 'ignore'> = ['ignore', 'pipe', 'pipe'];
  while (stdio.length < INHERITED_FD) stdio.push('ignore');
  stdio.push('pipe');
  const child: ChildProcess = spawn(process.execPath, [...HANGAR_FROM_SOURCES, 'serve'], {
    env: {
      ...process.env,
      ...databaseEnv(database),
      HOST: '127.0.0.1',
      PORT: String(port),
      HANGAR_LOG_LEVEL: 'warn',
      HANGAR_BOOTSTRAP_API_KEY: apiKey,
      HANGAR_CONFIG: configFile,
      HANGAR_SANDBOX: 'bwrap',
    },
    stdio,
  });
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    await stopChild(child, 'SIGKILL');
    await database.drop();
    fs.rmSync(configDir, { recursive: true, force: true });
  };
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code) => reject(new Error(`server exited with ${code}: ${output}`))),
  );
  exited.catch(() => undefined);
  for (let ready = false; !ready; ) {
    ready = await Promise.race([
      fetch(`${url}/readyz`).then(
        // Ready only if the answer is the child's own: another test's server may hold the port (listening.ts).
        (response) => response.ok && listensOn(child.pid!, port),
        () => false,
      ),
      exited,
    ]);
    // Another process's readiness: only asking tells.
    if (!ready) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const request = async (method: string, urlPath: string, body?: unknown) => {
    const response = await fetch(`${url}/api/v1${urlPath}`, {
      method,
      headers: {
        authorization: `Bearer ${apiKey}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  };
  return { url, apiKey, dataDir: database.dataDir, log: () => output, request, stop };
}

/** Starts a run of the probe harness after `setupCommands`; returns its id. */
export async function startProbeRun(server: RootServer, setupCommands: string[]): Promise<string> {
  const environment = await server.request('POST', '/environments', {
    name: `probe ${Math.random()}`,
    setup_commands: setupCommands,
  });
  if (environment.status !== 201)
    throw new Error(`environment: ${environment.status} ${JSON.stringify(environment.body)}`);
  const run = await server.request('POST', '/agent/runs', {
    prompt: 'probe',
    config: { environment_id: environment.body.uid },
  });
  if (run.status !== 200) throw new Error(`run: ${run.status} ${JSON.stringify(run.body)}`);
  return run.body.run_id as string;
}

/** Waits for the run to end and returns it with the lines the probe printed (its transcript). */
export async function probeResult(server: RootServer, runId: string): Promise<{ run: any; lines: string[] }> {
  let run: any;
  for (;;) {
    run = (await server.request('GET', `/agent/runs/${runId}`)).body;
    if (['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED'].includes(run.state)) break;
    // The root server is another process: no signal of this one tells of its moves.
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const link = await fetch(`${server.url}/api/v1/agent/runs/${runId}/transcript`, {
    headers: { authorization: `Bearer ${server.apiKey}` },
    redirect: 'manual',
  });
  if (link.status !== 302) return { run, lines: [] };
  const raw = await (await fetch(link.headers.get('location')!)).text();
  // The probe's output is plain text: its transcript is its lines as they came.
  const lines = raw.split('\n').filter((line) => line !== '');
  return { run, lines };
}
