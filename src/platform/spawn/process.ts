/**
 * How Hangar starts a process: through the spawner once a server or worker started it (startSpawner), else through
 * Node's own spawn (the CLI, one-off tools, tests of parts).
 */
import { spawn as nodeSpawn } from 'node:child_process';
import type { EventEmitter } from 'node:events';
import type { Readable, Writable } from 'node:stream';
import type { SpawnOptions } from './protocol.js';
import { Spawner } from './spawner.js';

/** What a caller may use of a started process, whichever way it was started. */
export interface StartedProcess extends EventEmitter {
  readonly pid: number | undefined;
  readonly exitCode: number | null;
  readonly signalCode: NodeJS.Signals | null;
  readonly stdio: ReadonlyArray<Readable | Writable | null | undefined>;
  readonly stdin: Writable | null;
  readonly stdout: Readable | null;
  readonly stderr: Readable | null;
  kill(signal?: NodeJS.Signals | number): boolean;
  unref(): void;
}

let spawner: Spawner | undefined;
/** Servers and workers of this process using the spawner (tests run several servers in one process). */
let users = 0;

/** Started by a server or a worker first thing, while the process is small; each start needs its stopSpawner. */
export function startSpawner(): Spawner {
  users++;
  spawner ??= new Spawner();
  spawner.start();
  return spawner;
}

/** The last user's stop ends the spawner; what it started and still runs keeps running, as Node's children do. */
export async function stopSpawner(): Promise<void> {
  users = Math.max(0, users - 1);
  if (users > 0) return;
  const stopping = spawner;
  spawner = undefined;
  await stopping?.stop();
}

/** The running spawner, if any (for status and metrics). */
export function currentSpawner(): Spawner | undefined {
  return spawner;
}

/**
 * Starts a process. Unlike Node's spawn, its pid is known only at 'spawn' (the spawner reports it): wait for
 * `started()` before using it.
 */
export function spawnProcess(file: string, args: readonly string[], options: SpawnOptions = {}): StartedProcess {
  if (spawner) return spawner.spawn(file, args, options);
  return nodeSpawn(file, [...args], {
    cwd: options.cwd,
    env: options.env,
    detached: options.detached,
    stdio: [...(options.stdio ?? ['pipe', 'pipe', 'pipe'])],
    ...(options.uid !== undefined ? { uid: options.uid } : {}),
    ...(options.gid !== undefined ? { gid: options.gid } : {}),
  }) as unknown as StartedProcess;
}

/** Resolves with the pid once the process runs, rejects with the spawn error (ENOENT, EACCES, ...) otherwise. */
export function started(child: StartedProcess): Promise<number> {
  if (child.pid !== undefined) return Promise.resolve(child.pid);
  return new Promise((resolve, reject) => {
    child.once('spawn', () => resolve(child.pid!));
    child.once('error', (error) => {
      if (child.pid === undefined) reject(error);
    });
  });
}
