/**
 * A PostgreSQL cluster of a test's own, in a temporary directory, for tests that stop, restart or kill the
 * database server. The shared cluster (TEST_DATABASE_URL) serves every other test file at once and must never be
 * restarted; this one belongs to the test that started it.
 *
 * It runs the installed server (/usr/lib/postgresql/<version>/bin) as the `postgres` user (the server refuses to
 * run as root), on a free port on 127.0.0.1, with its socket in its own directory. The postmaster is this
 * process's direct child, started through `setpriv --pdeathsig SIGQUIT`: if the test process dies, the cluster
 * shuts down with it instead of outliving the run.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { TestDatabase } from './server.js';
import { freePort } from './server.js';

export interface PrivatePostgres {
  port: number;
  /** The cluster's data directory (also holds its socket and `server.log`). */
  directory: string;
  /** A connection string to `database` (default `postgres`) as the superuser `postgres`. */
  url(database?: string): string;
  /** Creates an empty database (`createTestDatabase()`'s counterpart): a server started on it migrates it. */
  createDatabase(name?: string): Promise<TestDatabase>;
  /** Starts the cluster again after stop() or kill(); resolves once it accepts connections. */
  start(): Promise<void>;
  /** A clean shutdown (`fast`: sessions are disconnected with 57P01) or `immediate` (no checkpoint; recovery at the next start). */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  /** SIGKILL of the postmaster and of every backend at once, as an out-of-memory kill or a lost machine would do. */
  kill(): Promise<void>;
  /** stop() then start(). */
  restart(mode?: 'fast' | 'immediate'): Promise<void>;
  /** Whether the postmaster is running. */
  running(): boolean;
  /** Stops the cluster (if running) and deletes its directory. */
  destroy(): Promise<void>;
}

function serverBinary(name: string): string {
  const root = '/usr/lib/postgresql';
  const versions = fs.existsSync(root)
    ? fs
        .readdirSync(root)
        .filter((entry) => fs.existsSync(path.join(root, entry, 'bin', name)))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (versions.length === 0) throw new Error(`no PostgreSQL server installed under ${root} (${name} not found)`);
  return path.join(root, versions[0]!, 'bin', name);
}

/** Whether a private cluster can be started here (a skip reason otherwise). */
export function privatePostgresUnavailable(): string | false {
  try {
    serverBinary('postgres');
  } catch (error) {
    return (error as Error).message;
  }
  if (process.getuid?.() !== 0) return 'a private PostgreSQL cluster is started as the postgres user, which needs root';
  return false;
}

/** Runs `command` as the postgres user (setpriv execs it directly: no intermediate process). */
function asPostgres(command: string, args: string[], extra: string[] = []): [string, string[]] {
  return ['setpriv', ['--reuid=postgres', '--regid=postgres', '--init-groups', ...extra, command, ...args]];
}

/** Initialises a cluster in a new temporary directory and starts it. */
export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-private-pg-'));
  execFileSync('chown', ['postgres:postgres', directory]);
  fs.chmodSync(directory, 0o700);
  const [initdb, initdbArgs] = asPostgres(serverBinary('initdb'), [
    '-D',
    directory,
    '-U',
    'postgres',
    '--auth=trust',
    '--no-sync',
    '--encoding=UTF8',
    '--locale=C',
  ]);
  execFileSync(initdb, initdbArgs, { stdio: ['ignore', 'ignore', 'pipe'] });
  const port = await freePort();
  const logPath = path.join(directory, 'server.log');
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();

  const url = (database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`;

  const start = async () => {
    if (child) throw new Error('the private PostgreSQL cluster is already running');
    const [command, args] = asPostgres(
      serverBinary('postgres'),
      [
        '-D',
        directory,
        '-p',
        String(port),
        '-k',
        directory,
        '-c',
        'listen_addresses=127.0.0.1',
        // Durability across a power loss is not what a test checks (the kernel keeps what was written), so no
        // fsync. Commits stay synchronous: an asynchronous commit is lost by a kill(), which would fake a bug.
        '-c',
        'fsync=off',
        '-c',
        'full_page_writes=off',
        '-c',
        'max_connections=60',
        '-c',
        'shared_buffers=16MB',
      ],
      ['--pdeathsig', 'SIGQUIT'],
    );
    const started = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    child = started;
    const log = fs.createWriteStream(logPath, { flags: 'a' });
    exited = new Promise((resolve) =>
      started.once('exit', () => {
        if (child === started) child = undefined;
        resolve();
      }),
    );
    // Ready once the postmaster says so in its log (it writes to stderr without a logging collector).
    await new Promise<void>((resolve, reject) => {
      let output = '';
      const onExit = (code: number | null, signal: string | null) =>
        reject(new Error(`the private PostgreSQL cluster exited at start (${code ?? signal}): ${output}`));
      started.once('exit', onExit);
      started.stderr!.on('data', (chunk: Buffer) => {
        log.write(chunk);
        if (!output.includes('ready to accept connections')) {
          output += chunk.toString();
          if (output.includes('ready to accept connections')) {
            started.off('exit', onExit);
            resolve();
          }
        }
      });
    });
  };

  const signalAndWait = async (signal: NodeJS.Signals) => {
    const running = child;
    if (!running) return;
    running.kill(signal);
    await exited;
  };

  const cluster: PrivatePostgres = {
    port,
    directory,
    url,
    async createDatabase(name = `hangar_private_${Math.random().toString(36).slice(2, 10)}`) {
      const admin = new pg.Client({ connectionString: url() });
      await admin.connect();
      try {
        await admin.query(`CREATE DATABASE "${name}"`);
      } finally {
        await admin.end();
      }
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-test-'));
      return {
        dataDir,
        databaseUrl: url(name),
        // The whole cluster goes with destroy(); only the server's data directory is this database's own.
        drop: async () => fs.rmSync(dataDir, { recursive: true, force: true }),
      };
    },
    start,
    // SIGINT is PostgreSQL's fast shutdown, SIGQUIT its immediate one.
    stop: (mode = 'fast') => signalAndWait(mode === 'fast' ? 'SIGINT' : 'SIGQUIT'),
    async kill() {
      const running = child;
      if (!running?.pid) return;
      // The postmaster is stopped first, so that it forks no new backend (a reconnecting pool asks for them all
      // the time) between the listing of its children and its own death: such a backend would outlive it, hold the
      // shared memory, and the next start would refuse. Then the backends, then the postmaster: nothing gets to
      // clean up.
      running.kill('SIGSTOP');
      const backends = childrenOf(running.pid);
      for (const pid of backends) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // Already gone.
        }
      }
      running.kill('SIGKILL');
      await exited;
      // A backend SIGKILLed with its postmaster may still be exiting; the next start waits for the shared memory.
      await waitUntilGone(backends);
    },
    async restart(mode = 'fast') {
      await cluster.stop(mode);
      await start();
    },
    running: () => child !== undefined,
    async destroy() {
      await signalAndWait('SIGQUIT');
      fs.rmSync(directory, { recursive: true, force: true });
    },
  };
  await start();
  return cluster;
}

/** The pids whose parent is `parent` (read from /proc). */
function childrenOf(parent: number): number[] {
  const pids: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      // The command name may hold spaces and parentheses: the fields after the last ')' are fixed.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[1]) === parent) pids.push(Number(entry));
    } catch {
      // The process exited while we read.
    }
  }
  return pids;
}

/** Resolves once none of `pids` exists any more (a SIGKILLed process leaves within a scheduler tick or two). */
async function waitUntilGone(pids: number[]): Promise<void> {
  for (const pid of pids) {
    for (;;) {
      let state: string | undefined;
      try {
        const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
        state = stat.slice(stat.lastIndexOf(')') + 2)[0];
      } catch {
        break; // Gone.
      }
      if (state === 'Z') break; // Dead, waiting for whoever reaps it.
      // Not our child: no 'exit' event, only /proc tells.
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }
}
