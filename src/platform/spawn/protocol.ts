/**
 * The messages between the server and its spawner (spawner.ts, spawner-main.ts), over the spawner's IPC channel
 * with structured-clone serialization, so a chunk of output crosses as bytes.
 */
export interface SpawnOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  uid?: number;
  gid?: number;
  /** Its own process group (the caller can then signal the whole tree with a negative pid). */
  detached?: boolean;
  /** Descriptors 0..n-1: a pipe each, or nothing (`ignore`). Default: three pipes. */
  stdio?: ReadonlyArray<'pipe' | 'ignore'>;
}

export type ToSpawner =
  | { op: 'spawn'; id: number; file: string; args: string[]; options: SpawnOptions }
  | { op: 'write'; id: number; fd: number; data: Uint8Array }
  | { op: 'end'; id: number; fd: number }
  /** The server's side of a descriptor was destroyed: the spawner closes its end too, as Node would close the pipe. */
  | { op: 'destroy'; id: number; fd: number }
  | { op: 'kill'; id: number; signal: NodeJS.Signals | number };

export interface SpawnFailure {
  message: string;
  code?: string;
  errno?: number;
  syscall?: string;
  path?: string;
}

export type FromSpawner =
  | { op: 'spawned'; id: number; pid: number }
  | { op: 'failed'; id: number; error: SpawnFailure }
  | { op: 'data'; id: number; fd: number; data: Uint8Array }
  | { op: 'exit'; id: number; code: number | null; signal: NodeJS.Signals | null }
  /** After every descriptor of the process closed: no data for it follows. */
  | { op: 'close'; id: number };
