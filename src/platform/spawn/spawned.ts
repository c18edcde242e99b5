import { EventEmitter } from 'node:events';
import { Duplex } from 'node:stream';
import type { SpawnFailure, ToSpawner } from './protocol.js';

/**
 * A process the spawner started, as the server sees it: the parts of Node's ChildProcess Hangar uses (its pid,
 * a stream per descriptor, kill, and the 'spawn', 'error', 'exit' and 'close' events in that order), so a caller
 * works the same whether the spawner or Node's own spawn started it.
 */
export class SpawnedProcess extends EventEmitter {
  pid: number | undefined;
  exitCode: number | null = null;
  signalCode: NodeJS.Signals | null = null;
  killed = false;
  /** Set when the spawner died while this process ran (it was killed then). */
  lostWithSpawner = false;
  readonly stdio: Array<Duplex | null>;
  private referenced = true;
  /** Failed to start, or closed: the spawner knows this process no more, and nothing is sent for it. */
  private ended = false;

  constructor(
    private readonly id: number,
    stdio: ReadonlyArray<'pipe' | 'ignore'>,
    private readonly post: (message: ToSpawner) => void,
    private readonly onReference: (process: SpawnedProcess, referenced: boolean) => void,
  ) {
    super();
    this.stdio = stdio.map((kind, fd) => (kind === 'pipe' ? this.descriptor(fd) : null));
  }

  get stdin(): Duplex | null {
    return this.stdio[0] ?? null;
  }
  get stdout(): Duplex | null {
    return this.stdio[1] ?? null;
  }
  get stderr(): Duplex | null {
    return this.stdio[2] ?? null;
  }

  /**
   * Also before the spawner has reported the pid: it handles messages in order, so the kill reaches the process it
   * has just started (Node's spawn knows its child at once, and so may kill it at once).
   */
  kill(signal: NodeJS.Signals | number = 'SIGTERM'): boolean {
    if (this.ended || this.exitCode !== null || this.signalCode !== null) return false;
    this.killed = true;
    this.post({ op: 'kill', id: this.id, signal });
    return true;
  }

  /** Like ChildProcess.unref: this process no longer keeps the server's event loop alive. */
  unref(): void {
    if (!this.referenced) return;
    this.referenced = false;
    this.onReference(this, false);
  }

  ref(): void {
    if (this.referenced) return;
    this.referenced = true;
    this.onReference(this, true);
  }

  get isReferenced(): boolean {
    return this.referenced;
  }

  // What the spawner reports, applied in its order.

  started(pid: number): void {
    this.pid = pid;
    this.emit('spawn');
  }

  failed(error: SpawnFailure): void {
    const spawnError = Object.assign(new Error(error.message), error) as NodeJS.ErrnoException;
    this.ended = true;
    for (const stream of this.stdio) stream?.destroy();
    this.emit('error', spawnError);
    this.emit('close', -2, null);
  }

  output(fd: number, data: Uint8Array): void {
    const stream = this.stdio[fd];
    // Destroyed here meanwhile: what was already under way is dropped, as a closed pipe would have refused it.
    if (stream && !stream.destroyed) stream.push(Buffer.from(data.buffer, data.byteOffset, data.byteLength));
  }

  exited(code: number | null, signal: NodeJS.Signals | null): void {
    this.exitCode = code;
    this.signalCode = signal;
    this.emit('exit', code, signal);
  }

  closed(): void {
    this.ended = true;
    for (const stream of this.stdio) if (stream && !stream.destroyed && !stream.readableEnded) stream.push(null);
    this.emit('close', this.exitCode, this.signalCode);
  }

  private descriptor(fd: number): Duplex {
    const { id, post } = this;
    const ended = () => this.ended;
    return new Duplex({
      read() {
        // Output is pushed as it arrives; the spawner pauses its side when the channel backs up.
      },
      write(chunk: Buffer, _encoding, done) {
        post({ op: 'write', id, fd, data: chunk });
        done();
      },
      final(done) {
        post({ op: 'end', id, fd });
        done();
      },
      // Destroying a ChildProcess's pipe closes it, which the process sees (EPIPE, end of file), and with it the last
      // pipe an escaped process held open lets the process close; the spawner's end is closed alike.
      destroy(error, done) {
        if (!ended()) post({ op: 'destroy', id, fd });
        done(error);
      },
    });
  }
}
