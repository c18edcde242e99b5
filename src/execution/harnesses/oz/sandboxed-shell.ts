import path from 'node:path';
import type { SandboxMode } from '../../sandbox/backend.js';
import { spawnSandboxed } from '../../sandbox/index.js';
import type { ShellOptions, ShellResult } from './shell.js';

export interface SandboxedShellOptions {
  mode: SandboxMode;
  /** The workspace: under bwrap the only writable path, so it is the sandbox's root even for a subdirectory. */
  workspace: string;
  hiddenPaths: string[];
  allowNetwork: boolean;
}

/**
 * The oz agent's `run_command` inside the run's sandbox, like any harness process: the workspace is bound and the
 * shell changes into the requested directory itself. stdout and stderr are interleaved line by line; each keeps at
 * most the output cap.
 */
export function sandboxedShell(sandbox: SandboxedShellOptions) {
  return async (command: string, options: ShellOptions): Promise<ShellResult> => {
    const relative = path.relative(sandbox.workspace, options.cwd) || '.';
    const child = spawnSandboxed({
      mode: sandbox.mode,
      // "$0" is the directory and "$1" the command, so neither needs quoting.
      argv: ['/bin/sh', '-c', 'cd -- "$0" || exit 1; eval "$1"', relative, command],
      cwd: sandbox.workspace,
      env: Object.fromEntries(
        Object.entries(options.env).filter((entry): entry is [string, string] => entry[1] !== undefined),
      ),
      hiddenPaths: sandbox.hiddenPaths,
      allowNetwork: sandbox.allowNetwork,
      timeoutMs: options.timeoutMs,
      maxOutputBytes: options.maxOutputBytes,
      keepStdinOpen: false,
    });
    const lines: string[] = [];
    child.onStdoutLine((line) => lines.push(line));
    child.onStderrLine((line) => lines.push(line));
    let aborted = false;
    const onAbort = () => {
      aborted = true;
      void child.kill(0);
    };
    if (options.signal?.aborted) onAbort();
    else options.signal?.addEventListener('abort', onAbort, { once: true });
    const exit = await child.exited;
    options.signal?.removeEventListener('abort', onAbort);
    return {
      exitCode: exit.code,
      signal: exit.signal,
      output: lines.length > 0 ? `${lines.join('\n')}\n` : '',
      // The sandbox counts no dropped bytes, only that some were.
      truncatedBytes: exit.outputTruncated ? 1 : 0,
      timedOut: exit.timedOut,
      aborted,
    };
  };
}
