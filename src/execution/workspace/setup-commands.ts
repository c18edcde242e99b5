import { endSpan, startSpan } from '../../platform/tracing.js';
import { failureReason, OutputTail } from '../run/output-tail.js';
import type { SandboxedProcess } from '../sandbox/backend.js';
import { scrubbedEnvironment, spawnSandboxed } from '../sandbox/index.js';
import { workspaceHome } from './home.js';
import type { Report, SetupResult, WorkspaceOptions } from './options.js';

/** Runs setup commands in order in the sandbox, each under the time limit; the first that fails ends setup. */
export async function runSetupCommands(
  options: WorkspaceOptions,
  directory: string,
  commands: readonly string[],
  report: Report,
  abort: AbortSignal,
): Promise<SetupResult> {
  const home = await workspaceHome(directory, options.owner);
  for (const [index, command] of commands.entries()) {
    if (abort.aborted) return { ok: false, message: 'cancelled' };
    const started = Date.now();
    // Its position, not its text: a command line may hold what its author would not want in a trace.
    const span = startSpan('setup command', { attributes: { 'hangar.setup.index': index } });
    const output = new OutputTail();
    const child: SandboxedProcess = spawnSandboxed({
      mode: options.sandbox,
      argv: ['sh', '-c', command],
      cwd: directory,
      env: scrubbedEnvironment({}, home),
      hiddenPaths: options.hiddenPaths,
      allowNetwork: options.setupNetwork,
      timeoutMs: options.setupTimeoutMs,
      maxOutputBytes: options.maxOutputBytes,
      keepStdinOpen: false,
    });
    const keep = (line: string) => output.push(line);
    child.onStdoutLine(keep);
    child.onStderrLine(keep);
    const onAbort = () => void child.kill();
    abort.addEventListener('abort', onAbort, { once: true });
    const exit = await child.exited;
    abort.removeEventListener('abort', onAbort);
    span?.setAttribute('process.exit.code', exit.code ?? -1);
    endSpan(span, exit.code === 0 ? undefined : new Error(exit.timedOut ? 'timed out' : 'exited with an error'));
    if (exit.killed || abort.aborted) return { ok: false, message: 'cancelled' };
    const payload = {
      command,
      exit_code: exit.code,
      duration_ms: Date.now() - started,
      output_tail: output.lines().join('\n'),
    };
    if (exit.code === 0) {
      await report('environment_setup_command', payload);
      continue;
    }
    await report('environment_setup_step_failed', { ...payload, timed_out: exit.timedOut });
    const why = exit.limitExceeded
      ? exit.limitExceeded
      : exit.timedOut
        ? `timed out after ${Math.round(options.setupTimeoutMs / 60000)} minutes`
        : exit.code === null
          ? `was killed by ${exit.signal}`
          : `exited with code ${exit.code}`;
    const reason = exit.limitExceeded ? undefined : failureReason(output.lines());
    return {
      ok: false,
      message: `Environment setup failed: setup command \`${command}\` ${why}${reason ? `: ${reason.slice(0, 500)}` : ''}`,
    };
  }
  return { ok: true };
}
