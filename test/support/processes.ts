/**
 * Child-process helpers for start-up and crash tests: run `hangar serve` and watch it start, refuse to start, or
 * exit. Complements spawnServer() in ./server.ts (which waits for a successful start); spawnKeyedServer() here is
 * spawnServer on a test database with a bootstrap API key.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { generateApiKey } from '../../src/platform/crypto.js';
import { listensOn } from './listening.js';
import { spawnedServerClient } from './runs.js';
import { freePort, spawnServer, type TestDatabase, type TestServer } from './server.js';
import { trackServerProcess } from './server-processes.js';
import { HANGAR_FROM_SOURCES } from './typescript.js';

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** Resolves when the child has exited (at once if it already has). */
export function waitForExit(child: ChildProcess): Promise<Exit> {
  if (child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  }
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

/** Sends a signal and waits for the child to exit; a no-op for a child that already exited. */
export async function stopChild(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<Exit> {
  if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  return waitForExit(child);
}

export interface StartAttempt {
  /** The exit of a process that did not start; null when it started and answered /readyz instead. */
  exit: Exit | null;
  stdout: string;
  stderr: string;
  child: ChildProcess;
  url: string;
}

/**
 * Runs `hangar serve` with `env` on a free port until it either exits or becomes ready, whichever comes first.
 * Meant for starts that must fail: the test asserts `exit` is set. A process that started after all is
 * returned running (the caller stops it), so a regression fails the assertion instead of hanging the test.
 */
export async function attemptServe(env: Record<string, string>): Promise<StartAttempt> {
  const port = await freePort();
  let stdout = '';
  let stderr = '';
  const child = spawn(process.execPath, [...HANGAR_FROM_SOURCES, 'serve'], {
    env: { ...process.env, HOST: '127.0.0.1', PORT: String(port), HANGAR_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  trackServerProcess(child);
  child.stdout!.on('data', (chunk) => (stdout += chunk));
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  // An unusable PORT (a start that must fail) leaves the free port to poll.
  const polled = env.PORT && /^[1-9]\d*$/.test(env.PORT) ? Number(env.PORT) : port;
  const url = `http://127.0.0.1:${polled}`;
  const exited = waitForExit(child).then((exit) => ({ kind: 'exit' as const, exit }));
  // Streams may still hold output when 'exit' fires; 'close' means they are drained.
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  for (;;) {
    const ready = fetch(`${url}/readyz`).then(
      // Ready only if the answer is the child's own: another test's server may hold the port (listening.ts).
      (response) =>
        response.ok && listensOn(child.pid!, polled) ? { kind: 'ready' as const } : { kind: 'not-ready' as const },
      () => ({ kind: 'not-ready' as const }),
    );
    const outcome = await Promise.race([exited, ready]);
    if (outcome.kind === 'exit') {
      await closed;
      return { exit: outcome.exit, stdout, stderr, child, url };
    }
    if (outcome.kind === 'ready') return { exit: null, stdout, stderr, child, url };
    // Another process's readiness: only asking tells (its exit is an event, and ends the wait at once).
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 100))]);
  }
}

/**
 * Resolves once the output of a spawned server (spawnServer's `output`, fed by its stdout and stderr) holds
 * `pattern` (or `pattern(output)` holds), with what matched: looked at now and at each chunk the process writes, not
 * polled. Fails when the process's streams close first.
 */
export function waitForOutput(
  server: { child: ChildProcess; output: () => string },
  pattern: RegExp | string | ((output: string) => boolean),
): Promise<string> {
  const { stdout, stderr } = server.child;
  const find = () => {
    const output = server.output();
    if (typeof pattern === 'function') return pattern(output) ? output : undefined;
    if (typeof pattern === 'string') return output.includes(pattern) ? pattern : undefined;
    return output.match(pattern)?.[0];
  };
  return new Promise((resolve, reject) => {
    const stop = () => {
      stdout?.off('data', look);
      stderr?.off('data', look);
      server.child.off('close', closed);
    };
    // Added after spawnServer's own listeners: output() already holds the chunk.
    const look = () => {
      const found = find();
      if (found === undefined) return;
      stop();
      resolve(found);
    };
    const closed = () => {
      stop();
      const found = find();
      if (found === undefined) reject(new Error(`the server's output never had ${pattern}:\n${server.output()}`));
      else resolve(found);
    };
    stdout?.on('data', look);
    stderr?.on('data', look);
    server.child.once('close', closed);
    look();
  });
}

/** The environment that points `hangar serve` at a test database (from createTestDatabase()). */
export function databaseEnv(database: { dataDir: string; databaseUrl: string | undefined }): Record<string, string> {
  return { HANGAR_DATA_DIR: database.dataDir, ...(database.databaseUrl ? { DATABASE_URL: database.databaseUrl } : {}) };
}

/** A `hangar serve` process of spawnKeyedServer(), and what a test needs to call its API. */
export interface KeyedServer {
  child: ChildProcess;
  /** e.g. http://127.0.0.1:41234 */
  url: string;
  /** What the process wrote to stdout and stderr so far. */
  output: () => string;
  /** Its bootstrap API key. */
  apiKey: string;
  /** Its API with that key, for the run helpers (createRun, waitForState, ...): spawnedServerClient. */
  hangar: TestServer;
  /** The key as `authorization`, and `content-type: application/json`: for a fetch() of the API by hand. */
  headers: Record<string, string>;
  /**
   * The environment it was started with (the database's, `env`, the key): to start it again, or a test server of
   * this process as it (startTestServer(server.env, { database })).
   */
  env: Record<string, string>;
}

/**
 * Runs `hangar serve` (spawnServer) on `database` with a bootstrap API key: env.HANGAR_BOOTSTRAP_API_KEY when
 * given (a restart with the key of before), a new one otherwise. `env` adds to or overrides the database's.
 */
export async function spawnKeyedServer(
  database: Pick<TestDatabase, 'dataDir' | 'databaseUrl'>,
  env: Record<string, string> = {},
  args: string[] = [],
): Promise<KeyedServer> {
  const apiKey = env.HANGAR_BOOTSTRAP_API_KEY || generateApiKey();
  const fullEnv = { ...databaseEnv(database), ...env, HANGAR_BOOTSTRAP_API_KEY: apiKey };
  const spawned = await spawnServer(fullEnv, args);
  return {
    ...spawned,
    apiKey,
    hangar: spawnedServerClient(spawned.url, apiKey),
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    env: fullEnv,
  };
}

/** True when the suite runs on PostgreSQL (TEST_DATABASE_URL set), false on PGlite. */
export function onPostgres(): boolean {
  return Boolean(process.env.TEST_DATABASE_URL);
}
