import path from 'node:path';
import type { ResolvedDefinition } from '../../../mcp/index.js';
import type { ResolvedModel } from '../../../models/index.js';
import { type HarnessEvent, taskMessage } from '../../../runs/index.js';
import type { SandboxMode } from '../../sandbox/backend.js';
import { scrubbedEnvironment, spawnSandboxed } from '../../sandbox/index.js';
import { WorkspaceFiles } from '../../workspace/files.js';
import { HOME_DIRECTORY, workspaceHome } from '../../workspace/workspace.js';
import {
  type Harness,
  type HarnessSession,
  type HarnessSink,
  HarnessStartError,
  type HarnessTask,
} from '../harness.js';
import type { AgentCli } from './agent-cli.js';
import { locateBinary } from './locate.js';
import { cliPrompt, resumedPrompt } from './prompt.js';
import { proxiedMcpServers, proxiedModel } from './proxied.js';
import { restoreSession, sessionLine } from './session.js';

export interface CliHarnessOptions {
  sandbox: SandboxMode;
  hiddenPaths: string[];
  maxOutputBytes: number;
  timeoutMs: number;
  /** The operator-configured executable; else `cli.binary` is looked up on the server's PATH. */
  binaryPath?: string;
  /**
   * Give the CLI this server's model and MCP proxies (harness-support routes, task token) instead of the real
   * keys and registered servers' headers. A server's engine does; a self-hosted worker, whose keys are its own,
   * does not.
   */
  proxyCredentials?: boolean;
}

/**
 * What the sandbox gets instead of credentials: the model behind this server's proxy with the task token as its
 * key, and registered HTTP MCP servers behind the MCP proxy. The real keys and headers never enter the sandbox.
 */
function proxiedCredentials(
  task: HarnessTask,
  model: ResolvedModel,
): { model: ResolvedModel; mcpServers: Record<string, ResolvedDefinition> } {
  const apiUrl = task.env.HANGAR_API_URL;
  const token = task.env.HANGAR_TASK_TOKEN;
  if (!apiUrl || !token) throw new Error('the run has no API URL or task token for the credential proxies');
  return {
    model: proxiedModel(model, apiUrl, token),
    mcpServers: proxiedMcpServers(task.mcpServers ?? {}, task.agentConfig, apiUrl, token),
  };
}

/**
 * A coding-agent CLI as a harness: started headless in the run's sandbox (with network, for its model endpoint)
 * on the whole task as one prompt, its stream JSON kept as the transcript and read through `cli.translate`. It
 * takes no input while it runs: follow-ups start the next execution, which gets the conversation so far.
 */
export class CliHarness implements Harness {
  readonly name: string;
  readonly translate: (line: string) => HarnessEvent[];
  /** The CLI reaches its model endpoint itself. */
  readonly network = true;

  constructor(
    private readonly cli: AgentCli,
    private readonly options: CliHarnessOptions,
  ) {
    this.name = cli.name;
    this.translate = (line) => cli.translate(line);
  }

  async start(task: HarnessTask, sink: HarnessSink): Promise<HarnessSession> {
    const { cli, options } = this;
    const wanted = options.binaryPath ?? cli.binary;
    const binary = locateBinary(wanted, process.env.PATH);
    if (!binary) {
      const where = options.binaryPath ? `at ${options.binaryPath}` : "on the server's PATH";
      throw new HarnessStartError(
        `The ${cli.name} harness needs the ${cli.binary} executable, which is not ${where}: install the npm package ${cli.npmPackage}`,
        'integration_not_configured',
      );
    }
    if (!task.model)
      throw new HarnessStartError(
        `The ${cli.name} harness needs a model from the catalogue, and none was resolved for this run`,
        'integration_not_configured',
      );
    const { home, invocation } = await this.prepare(task, task.model);
    sink.input(JSON.stringify(taskMessage(task)));
    const env = scrubbedEnvironment({ ...task.env, ...invocation.env }, home);
    // The codex and gemini launchers are `#!/usr/bin/env node` scripts: the server's own node is there to be found
    // even when its directory is not on the PATH it was started with.
    const searchPath = (env.PATH ?? '').split(path.delimiter);
    if (!searchPath.includes(path.dirname(process.execPath)))
      env.PATH = [...searchPath, path.dirname(process.execPath)].join(path.delimiter);
    const child = spawnSandboxed({
      mode: options.sandbox,
      argv: [binary, ...invocation.args],
      cwd: task.workspace,
      env,
      hiddenPaths: options.hiddenPaths,
      allowNetwork: true,
      timeoutMs: options.timeoutMs,
      maxOutputBytes: options.maxOutputBytes,
      keepStdinOpen: false,
      stdinText: invocation.stdin,
      operatorFiles: [binary],
    });
    child.onStdoutLine((line) => sink.output(line));
    child.onStderrLine((line) => sink.diagnostic(line));
    // The session the CLI wrote goes into the transcript before the execution counts as over, for the next one.
    const exited = child.exited.then(async (exit) => {
      const line = await sessionLine(cli, task.workspace);
      if (line) sink.output(line);
      return exit;
    });
    return {
      acceptsInput: false,
      send: () => false,
      cancel: async () => {
        await child.kill();
      },
      exited,
    };
  }

  /** HOME, the CLI's own session put back when the last execution kept one, and the CLI's invocation. */
  private async prepare(task: HarnessTask, model: NonNullable<HarnessTask['model']>) {
    const { cli } = this;
    const owner = task.workspaceOwner;
    const home = await workspaceHome(task.workspace, owner);
    // The CLI's own session of the last execution, when it kept one, else a recap of the conversation in the prompt.
    const resume = await restoreSession(cli, task.history, task.workspace, owner);
    const prompt = resume ? resumedPrompt(task) : cliPrompt(task, this.translate);
    const writeHomeFile = (relative: string, content: string) =>
      WorkspaceFiles.with(task.workspace, owner, (files) => files.writeFile(`${HOME_DIRECTORY}/${relative}`, content));
    const { model: given, mcpServers } = this.options.proxyCredentials
      ? proxiedCredentials(task, model)
      : { model, mcpServers: task.mcpServers ?? {} };
    const invocation = await cli.invocation({
      prompt,
      model: given,
      workspace: task.workspace,
      home,
      writeHomeFile,
      mcpServers,
      ...(resume ? { resume } : {}),
    });
    return { home, resume, invocation };
  }
}
