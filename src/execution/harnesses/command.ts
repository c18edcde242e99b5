import type { CommandHarnessConfig } from '../../config-file.js';
import { taskMessage, type UserMessage } from '../../runs/index.js';
import type { SandboxMode } from '../sandbox/backend.js';
import { scrubbedEnvironment, spawnSandboxed } from '../sandbox/index.js';
import { workspaceHome } from '../workspace/workspace.js';
import type { Harness, HarnessSession, HarnessSink, HarnessTask } from './harness.js';

export interface CommandHarnessOptions {
  sandbox: SandboxMode;
  hiddenPaths: string[];
  maxOutputBytes: number;
}

/**
 * A harness the operator defines in the config file: any program that reads the task as JSON on stdin and writes
 * the event protocol (or plain text) on stdout. API callers can only pick one by name.
 */
export class CommandHarness implements Harness {
  readonly name: string;

  constructor(
    private readonly config: CommandHarnessConfig,
    private readonly options: CommandHarnessOptions,
  ) {
    this.name = config.name;
  }

  get network(): boolean {
    return this.config.network;
  }

  /** The operator's `env` for it: what of it is a credential is redacted from its runs' output. */
  get credentials(): Readonly<Record<string, string>> {
    return this.config.env;
  }

  get transcriptFormat(): 'events' | 'text' {
    return this.config.output;
  }

  async start(task: HarnessTask, sink: HarnessSink): Promise<HarnessSession> {
    const taskLine = JSON.stringify(taskMessage(task));
    sink.input(taskLine);
    const child = spawnSandboxed({
      mode: this.options.sandbox,
      argv: this.config.command,
      cwd: task.workspace,
      env: scrubbedEnvironment(
        { ...this.config.env, ...task.env },
        await workspaceHome(task.workspace, task.workspaceOwner),
      ),
      hiddenPaths: this.options.hiddenPaths,
      allowNetwork: this.config.network,
      timeoutMs: this.config.timeoutMinutes * 60_000,
      maxOutputBytes: this.options.maxOutputBytes,
      keepStdinOpen: this.config.acceptsInput,
      stdinText: `${taskLine}\n`,
      operatorFiles: this.config.command,
    });
    child.onStdoutLine((line) => sink.output(line));
    child.onStderrLine((line) => sink.diagnostic(line));
    const acceptsInput = this.config.acceptsInput;
    return {
      acceptsInput,
      send(text: string): boolean {
        if (!acceptsInput) return false;
        const line = JSON.stringify({ type: 'user_message', text } satisfies UserMessage);
        if (!child.write(`${line}\n`)) return false;
        sink.input(line);
        return true;
      },
      cancel: async () => {
        await child.kill();
      },
      exited: child.exited,
    };
  }
}
