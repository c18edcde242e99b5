import { spawnProcess } from '../../../platform/spawn/index.js';

export interface ShellOptions {
  cwd: string;
  env: Record<string, string | undefined>;
  timeoutMs: number;
  /** Bytes of combined stdout and stderr kept; the rest is dropped (and counted). */
  maxOutputBytes: number;
  signal?: AbortSignal;
}

export interface ShellResult {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  output: string;
  truncatedBytes: number;
  timedOut: boolean;
  aborted: boolean;
}

/**
 * Runs a shell command in its own process group, so a timeout or cancel kills it and everything it started.
 * stdin is closed; stdout and stderr are interleaved as they arrive.
 */
export function runShell(command: string, options: ShellOptions): Promise<ShellResult> {
  return new Promise((resolve, reject) => {
    const child = spawnProcess('/bin/sh', ['-c', command], {
      cwd: options.cwd,
      env: options.env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const chunks: Buffer[] = [];
    let kept = 0;
    let truncatedBytes = 0;
    let timedOut = false;
    let aborted = false;
    const collect = (chunk: Buffer) => {
      const room = options.maxOutputBytes - kept;
      if (room > 0) {
        const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
        chunks.push(part);
        kept += part.length;
      }
      truncatedBytes += Math.max(0, chunk.length - Math.max(room, 0));
    };
    child.stdout!.on('data', collect);
    child.stderr!.on('data', collect);
    // The spawner reports the pid at 'spawn': a kill asked for before then is sent then.
    let killWhenStarted = false;
    child.once('spawn', () => {
      if (killWhenStarted) killGroup();
    });
    const killGroup = () => {
      if (child.pid === undefined) {
        killWhenStarted = true;
        return;
      }
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, options.timeoutMs);
    const onAbort = () => {
      aborted = true;
      killGroup();
    };
    if (options.signal?.aborted) onAbort();
    else options.signal?.addEventListener('abort', onAbort, { once: true });
    child.on('error', (error) => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      reject(error);
    });
    // Background processes the command left would hold the pipes open: they go when the shell exits.
    child.on('exit', killGroup);
    child.on('close', (exitCode, signal) => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      // Whatever the command left running in its group goes with it.
      killGroup();
      resolve({ exitCode, signal, output: Buffer.concat(chunks).toString('utf8'), truncatedBytes, timedOut, aborted });
    });
  });
}
