import { spawnProcess } from './process.js';

export interface ExecFileOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  uid?: number;
  gid?: number;
  /** Bytes of stdout or stderr at most (default 1 MiB, as Node's execFile): past it the process is killed. */
  maxBuffer?: number;
  /** Killed (killSignal) after this many milliseconds; 0 or unset: never. */
  timeout?: number;
  killSignal?: NodeJS.Signals;
  signal?: AbortSignal;
  /** 'buffer' for bytes; text (UTF-8) otherwise. */
  encoding?: BufferEncoding | 'buffer';
  /** Written to stdin, which is then closed (as execFileSync's `input`); without it stdin is closed at once. */
  input?: string | Uint8Array;
}

export interface ExecFileResult<Output = string> {
  stdout: Output;
  stderr: Output;
}

/**
 * promisify(child_process.execFile), through spawnProcess: the same result, and an error of the same shape on a
 * failed start (code ENOENT...), a non-zero exit (code = the status, stdout and stderr attached), a kill by timeout
 * or abort (killed, signal) or too much output (code ERR_CHILD_PROCESS_STDIO_MAXBUFFER). stdin gets `input`, if
 * any, and is closed.
 */
export function execFileAsync(
  file: string,
  args: readonly string[],
  options: ExecFileOptions & { encoding: 'buffer' },
): Promise<ExecFileResult<Buffer>>;
export function execFileAsync(
  file: string,
  args: readonly string[],
  options?: ExecFileOptions,
): Promise<ExecFileResult>;
export function execFileAsync(
  file: string,
  args: readonly string[],
  options: ExecFileOptions = {},
): Promise<ExecFileResult<string | Buffer>> {
  const maxBuffer = options.maxBuffer ?? 1024 * 1024;
  const child = spawnProcess(file, args, {
    cwd: options.cwd,
    env: options.env,
    uid: options.uid,
    gid: options.gid,
  });
  // EPIPE when the process ends (or fails) before it has read its input.
  child.stdin?.on('error', () => undefined);
  if (options.input !== undefined) child.stdin?.end(options.input);
  else child.stdin?.end();
  const chunks: Record<'stdout' | 'stderr', Buffer[]> = { stdout: [], stderr: [] };
  const sizes = { stdout: 0, stderr: 0 };
  let killedFor: 'timeout' | 'abort' | 'maxBuffer' | undefined;
  const kill = (reason: 'timeout' | 'abort' | 'maxBuffer') => {
    if (killedFor) return;
    killedFor = reason;
    child.kill(options.killSignal ?? 'SIGTERM');
  };
  for (const name of ['stdout', 'stderr'] as const) {
    child[name]?.on('data', (chunk: Buffer) => {
      sizes[name] += chunk.length;
      if (sizes[name] > maxBuffer) return kill('maxBuffer');
      chunks[name].push(chunk);
    });
  }
  const timer = options.timeout ? setTimeout(() => kill('timeout'), options.timeout) : undefined;
  const onAbort = () => kill('abort');
  options.signal?.addEventListener('abort', onAbort, { once: true });
  const text = (name: 'stdout' | 'stderr') => {
    const bytes = Buffer.concat(chunks[name]);
    return options.encoding === 'buffer' ? bytes : bytes.toString(options.encoding ?? 'utf8');
  };
  return new Promise((resolve, reject) => {
    const done = () => {
      if (timer) clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
    };
    child.once('error', (error) => {
      if (child.pid !== undefined) return;
      done();
      reject(Object.assign(error, { spawnargs: [...args], stdout: text('stdout'), stderr: text('stderr') }));
    });
    child.once('close', (code, signal) => {
      if (child.pid === undefined) return;
      done();
      const stdout = text('stdout');
      const stderr = text('stderr');
      if (code === 0 && !killedFor) return resolve({ stdout, stderr });
      const command = [file, ...args].join(' ');
      const error = new Error(
        killedFor === 'maxBuffer'
          ? `${command}: stdout or stderr over maxBuffer (${maxBuffer} bytes)`
          : `Command failed: ${command}\n${stderr}`,
      ) as NodeJS.ErrnoException & Record<string, unknown>;
      Object.assign(error, {
        code:
          killedFor === 'maxBuffer' ? 'ERR_CHILD_PROCESS_STDIO_MAXBUFFER' : killedFor === 'abort' ? 'ABORT_ERR' : code,
        killed: killedFor !== undefined,
        signal,
        cmd: command,
        stdout,
        stderr,
      });
      reject(error);
    });
  });
}

/**
 * How an execFileAsync process failed, for a message: its exit code, or the signal that ended it, and the last
 * `lines` lines of its stderr; undefined when it never started (the spawn's own error, ENOENT..., says why).
 */
export function failureOf(error: unknown, lines = 3): { how: string; stderrTail: string } | undefined {
  const failed = error as { code?: unknown; signal?: unknown; stderr?: unknown; syscall?: unknown };
  if (failed.syscall !== undefined) return undefined;
  const how = typeof failed.code === 'number' ? failed.code : (failed.signal ?? failed.code);
  const stderrTail = String(failed.stderr ?? '')
    .trim()
    .split('\n')
    .slice(-lines)
    .join(' ');
  return { how: String(how), stderrTail };
}
