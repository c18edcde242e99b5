import type { Readable } from 'node:stream';
import type { SandboxExit, SandboxedProcess } from './backend.js';

/** Splits a byte stream into lines; bytes are decoded per line, so a character split across chunks stays whole. */
export class LineSplitter {
  private pending: Buffer[] = [];

  push(chunk: Buffer): string[] {
    const lines: string[] = [];
    let start = 0;
    for (let end = chunk.indexOf(10, start); end !== -1; end = chunk.indexOf(10, start)) {
      this.pending.push(chunk.subarray(start, end));
      lines.push(decodeLine(Buffer.concat(this.pending)));
      this.pending = [];
      start = end + 1;
    }
    if (start < chunk.length) this.pending.push(chunk.subarray(start));
    return lines;
  }

  /** The last line when the stream ended without a newline. */
  flush(): string | undefined {
    if (this.pending.length === 0) return undefined;
    const line = decodeLine(Buffer.concat(this.pending));
    this.pending = [];
    return line;
  }
}

function decodeLine(bytes: Buffer): string {
  const text = bytes.toString('utf8');
  return text.endsWith('\r') ? text.slice(0, -1) : text;
}

/**
 * Delivers a stream's lines until it has passed `maxBytes`, then drops the rest while still reading, so the child
 * never blocks on a full pipe. Returns a function that delivers the unterminated last line.
 */
export function deliverLines(
  stream: Readable,
  maxBytes: number,
  deliver: (line: string) => void,
  truncated: () => void,
): () => void {
  const splitter = new LineSplitter();
  let received = 0;
  let open = true;
  stream.on('data', (chunk: Buffer) => {
    if (!open) return;
    const room = maxBytes - received;
    received += chunk.length;
    if (chunk.length > room) {
      // The lines that fit whole are kept; the one cut by the limit is not.
      open = false;
      truncated();
      splitter.push(chunk.subarray(0, room)).forEach(deliver);
      return;
    }
    splitter.push(chunk).forEach(deliver);
  });
  const flush = () => {
    if (!open) return;
    open = false;
    const last = splitter.flush();
    if (last !== undefined) deliver(last);
  };
  stream.on('end', flush);
  return flush;
}

/**
 * What every sandbox backend's process shares (bwrap and process mode in spawn.ts, the container's execs): the line
 * listeners its caller sets, fed from its stdout and stderr within the output limit, and the exit promise, settled
 * once, with whether output was cut.
 */
export class ProcessOutput {
  private readonly stdoutListeners: Array<(line: string) => void> = [];
  private readonly stderrListeners: Array<(line: string) => void> = [];
  private truncated = false;
  private settled = false;
  private resolveExited!: (exit: SandboxExit) => void;
  readonly exited = new Promise<SandboxExit>((resolve) => (this.resolveExited = resolve));

  constructor(private readonly maxOutputBytes: number) {}

  /** The listener half of a SandboxedProcess. */
  readonly onStdoutLine: SandboxedProcess['onStdoutLine'] = (listener) => void this.stdoutListeners.push(listener);
  readonly onStderrLine: SandboxedProcess['onStderrLine'] = (listener) => void this.stderrListeners.push(listener);

  /** Says a line on stdout or stderr to every listener (also the sandbox's own lines, e.g. why a start failed). */
  stdout(line: string): void {
    for (const listener of this.stdoutListeners) listener(line);
  }

  stderr(line: string): void {
    for (const listener of this.stderrListeners) listener(line);
  }

  /** Feeds a stream's lines to the stdout or stderr listeners; returns what delivers its unterminated last line. */
  read(stream: Readable, to: 'stdout' | 'stderr'): () => void {
    return deliverLines(
      stream,
      this.maxOutputBytes,
      (line) => (to === 'stdout' ? this.stdout(line) : this.stderr(line)),
      () => (this.truncated = true),
    );
  }

  get done(): boolean {
    return this.settled;
  }

  /** Resolves `exited` the first time; later calls are ignored. */
  settle(exit: Omit<SandboxExit, 'outputTruncated'>): void {
    if (this.settled) return;
    this.settled = true;
    this.resolveExited({ ...exit, outputTruncated: this.truncated });
  }
}
