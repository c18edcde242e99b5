/**
 * The spawner: a small process the server starts once at boot, while it is small, and asks to start every other
 * process. A fork copies the parent's page tables on the parent's thread, so the server's own forks grew with its
 * memory (0.5 ms per spawn at 57 MB of RSS, about 20 ms at 1.1 GB, on the event loop's thread); the spawner's stay
 * cheap, and it blocks nothing of the server's while it forks. It exits as soon as its channel to the server closes,
 * so that what watches for the server's death (the sandbox watchdog's pipe, bwrap's --die-with-parent, setpriv's
 * parent-death signal, all bound to the spawner as their parent) sees the server's.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import type { FromSpawner, SpawnFailure, ToSpawner } from './protocol.js';

const children = new Map<number, ChildProcess>();
/** Messages given to the channel and not yet written: past HIGH, output is paused until LOW. */
let unsent = 0;
const HIGH = 512;
const LOW = 128;
const paused = new Set<Readable>();

function send(message: FromSpawner): void {
  if (!process.connected) return;
  unsent++;
  process.send!(message, undefined, {}, () => {
    unsent--;
    if (unsent > LOW || paused.size === 0) return;
    for (const stream of paused) stream.resume();
    paused.clear();
  });
}

function start(message: Extract<ToSpawner, { op: 'spawn' }>): void {
  const { id, file, args, options } = message;
  const stdio = [...(options.stdio ?? ['pipe', 'pipe', 'pipe'])];
  let child: ChildProcess;
  try {
    child = spawn(file, args, {
      cwd: options.cwd,
      env: options.env,
      detached: options.detached,
      stdio,
      ...(options.uid !== undefined ? { uid: options.uid } : {}),
      ...(options.gid !== undefined ? { gid: options.gid } : {}),
    });
  } catch (error) {
    // Invalid arguments (a NUL in an argument, a bad cwd type) throw at once rather than emitting 'error'.
    send({ op: 'failed', id, error: failure(error) });
    return;
  }
  children.set(id, child);
  child.once('spawn', () => send({ op: 'spawned', id, pid: child.pid! }));
  child.once('error', (error) => {
    if (child.pid === undefined) {
      children.delete(id);
      send({ op: 'failed', id, error: failure(error) });
    }
  });
  child.stdio.forEach((stream, fd) => {
    if (!stream) return;
    // A descriptor the process stopped reading: the server's later writes are dropped, as on a broken pipe.
    stream.on('error', () => undefined);
    if (fd === 0) return;
    const readable = stream as Readable;
    readable.on('data', (data: Buffer) => {
      send({ op: 'data', id, fd, data });
      if (unsent > HIGH) {
        readable.pause();
        paused.add(readable);
      }
    });
  });
  child.once('exit', (code, signal) => send({ op: 'exit', id, code, signal }));
  child.once('close', () => {
    children.delete(id);
    send({ op: 'close', id });
  });
}

function failure(error: unknown): SpawnFailure {
  const e = error as NodeJS.ErrnoException;
  return { message: e.message, code: e.code, errno: e.errno, syscall: e.syscall, path: e.path };
}

process.on('message', (message: ToSpawner) => {
  if (message.op === 'spawn') return start(message);
  const child = children.get(message.id);
  if (!child) return;
  if (message.op === 'kill') {
    child.kill(message.signal);
    return;
  }
  const stream = child.stdio[message.fd] as (Writable & Readable) | null | undefined;
  if (!stream || stream.destroyed) return;
  if (message.op === 'write') stream.write(message.data);
  else if (message.op === 'end') stream.end();
  // Closes the pipe: a process still writing to it gets EPIPE, one reading from it end of file (bwrap's network hold).
  else stream.destroy();
});
// The server is gone (it exited, or died): so is the spawner, at once.
process.on('disconnect', () => process.exit(0));
