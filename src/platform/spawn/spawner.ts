import { type ChildProcess, fork } from 'node:child_process';
import fs from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import type { FromSpawner, SpawnOptions, ToSpawner } from './protocol.js';
import { SpawnedProcess } from './spawned.js';

/** How often a killed orphan is looked at until it has died (SIGKILL takes effect within milliseconds). */
const GONE_POLL_MS = 5;

/** Sources run through the TypeScript loader (tests, `npm run dev`); the build runs the compiled file. */
const MAIN = fileURLToPath(
  new URL(import.meta.url.endsWith('.ts') ? './spawner-main.ts' : './spawner-main.js', import.meta.url),
);

/**
 * The server's side of the spawner (spawner-main.ts): starts it once, hands it each process to start, and routes
 * what it reports to the process's SpawnedProcess. If the spawner dies, the processes it started are killed (their
 * output can no longer reach the server) and end as killed by SIGKILL, `lostWithSpawner` set, so that their callers
 * fail them as any killed process; the next spawn starts a new spawner.
 */
export class Spawner {
  private child: ChildProcess | undefined;
  private nextId = 1;
  private readonly running = new Map<number, SpawnedProcess>();
  private referenced = 0;
  private stopping = false;
  /** How many spawners were started (1 unless one died). */
  starts = 0;

  start(): void {
    if (this.child) return;
    this.starts++;
    const child = fork(MAIN, [], {
      // The server's loader flags (the TypeScript hooks in development), and a small heap: it holds no data.
      execArgv: [
        ...process.execArgv.filter((flag) => !flag.startsWith('--max-old-space-size')),
        '--max-old-space-size=32',
      ],
      serialization: 'advanced',
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    child.on('message', (message: FromSpawner) => this.receive(message));
    child.once('exit', () => this.lost(child));
    this.child = child;
    this.updateReference();
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  spawn(file: string, args: readonly string[], options: SpawnOptions = {}): SpawnedProcess {
    if (this.stopping) throw new Error('the spawner is stopping');
    this.start();
    const id = this.nextId++;
    const stdio = options.stdio ?? ['pipe', 'pipe', 'pipe'];
    const spawned = new SpawnedProcess(
      id,
      stdio,
      (message) => this.post(message),
      (_process, referenced) => {
        this.referenced += referenced ? 1 : -1;
        this.updateReference();
      },
    );
    this.running.set(id, spawned);
    this.referenced++;
    this.updateReference();
    // This process's environment and directory as they are now, as Node's spawn would take them (the spawner's are
    // those of the moment it started).
    const env = options.env ?? process.env;
    const cwd = options.cwd ?? process.cwd();
    this.post({ op: 'spawn', id, file, args: [...args], options: { ...options, env, cwd, stdio } });
    return spawned;
  }

  /** Ends the spawner (at the server's stop); processes still running keep running, as Node's own children do. */
  async stop(): Promise<void> {
    this.stopping = true;
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    const gone = new Promise((resolve) => child.once('exit', resolve));
    // Waited for: an unreferenced child would let the event loop end before its exit is heard.
    child.ref();
    child.disconnect();
    await gone;
  }

  private post(message: ToSpawner): void {
    if (!this.child?.connected) return;
    this.child.send(message);
  }

  private receive(message: FromSpawner): void {
    const spawned = this.running.get(message.id);
    if (!spawned) return;
    switch (message.op) {
      case 'spawned':
        return spawned.started(message.pid);
      case 'failed':
        this.forget(message.id, spawned);
        return spawned.failed(message.error);
      case 'data':
        return spawned.output(message.fd, message.data);
      case 'exit':
        return spawned.exited(message.code, message.signal);
      case 'close':
        this.forget(message.id, spawned);
        return spawned.closed();
    }
  }

  private forget(id: number, spawned: SpawnedProcess): void {
    this.running.delete(id);
    if (spawned.isReferenced) this.referenced--;
    this.updateReference();
  }

  /** The spawner is gone: what it started cannot report any more, so it is killed and ends as killed. */
  private lost(child: ChildProcess): void {
    if (this.child !== child) return;
    this.child = undefined;
    const orphans = [...this.running.values()];
    this.running.clear();
    this.referenced = 0;
    if (!this.stopping)
      process.emitWarning(`the spawner exited; the ${orphans.length} processes it had started were killed`, {
        code: 'HANGAR_SPAWNER_LOST',
      });
    for (const spawned of orphans) {
      spawned.lostWithSpawner = true;
      if (spawned.pid === undefined) {
        spawned.failed({ message: 'the spawner exited before the process started', code: 'ESPAWNERLOST' });
        continue;
      }
      for (const target of [-spawned.pid, spawned.pid]) {
        try {
          process.kill(target, 'SIGKILL');
        } catch {
          // Already gone, or not a group leader.
        }
      }
      // 'exit' means the process is dead: it is no child of ours, so its end is looked for, not waited on.
      void whenGone(spawned.pid).then(() => {
        if (spawned.exitCode === null && spawned.signalCode === null) spawned.exited(null, 'SIGKILL');
        spawned.closed();
      });
    }
  }

  /** The channel keeps the server alive only while a referenced process runs, as a ChildProcess would. */
  private updateReference(): void {
    const channel = this.child?.channel as { ref(): void; unref(): void } | undefined;
    if (!this.child || !channel) return;
    if (this.referenced > 0) {
      this.child.ref();
      channel.ref();
    } else {
      this.child.unref();
      channel.unref();
    }
  }
}

/** Resolves once `pid` has died (gone, or a zombie its new parent has yet to reap). */
async function whenGone(pid: number): Promise<void> {
  for (;;) {
    let state: string | undefined;
    try {
      state = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0];
    } catch {
      return;
    }
    if (state === undefined || state === 'Z' || state === 'X') return;
    await sleep(GONE_POLL_MS);
  }
}
