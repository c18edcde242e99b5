import type { AddressPolicy } from '../../../platform/net/address-policy.js';
import { saidNow, taskMessage, type UserMessage } from '../../../runs/index.js';
import type { SandboxExit, SandboxMode } from '../../sandbox/backend.js';
import { scrubbedEnvironment } from '../../sandbox/index.js';
import { workspaceHome } from '../../workspace/workspace.js';
import {
  type Harness,
  type HarnessSession,
  type HarnessSink,
  HarnessStartError,
  type HarnessTask,
} from '../harness.js';
import type { McpTools } from './mcp.js';
import { sandboxedShell } from './sandboxed-shell.js';

/**
 * The agent loop with the AI SDK, its providers and the MCP client: loaded by the first oz run, not at start, as a
 * server that never runs oz (a command harness, or no model key) would carry them for nothing (about 40 MB idle;
 * bench/idle-memory).
 */
const agentModules = () =>
  Promise.all([
    import('./loop.js'),
    import('./model.js'),
    import('./history.js'),
    import('./mcp.js'),
    import('./messaging-tools.js'),
  ]).then(([loop, model, history, mcp, messaging]) => ({ ...loop, ...model, ...history, ...mcp, ...messaging }));

export interface OzHarnessOptions {
  sandbox: SandboxMode;
  hiddenPaths: string[];
  /** Under bwrap: whether the agent's shell commands reach the network (package installs, git hosts). */
  network: boolean;
  /** Where HTTP MCP servers may be: oz connects to them from the server process. */
  addressPolicy: AddressPolicy;
  timeoutMinutes: number;
  maxSteps: number;
}

/**
 * Hangar's built-in coding agent as a harness. The loop runs in this process and calls the model itself; its
 * file tools stay inside the workspace, and its shell commands run in the run's sandbox like any harness process.
 * It writes the command-harness protocol, takes follow-ups while it runs, and resumes a conversation from the
 * transcript of earlier executions.
 */
export class OzHarness implements Harness {
  readonly name = 'oz';

  constructor(private readonly options: OzHarnessOptions) {}

  get network(): boolean {
    return this.options.network;
  }

  async start(task: HarnessTask, sink: HarnessSink): Promise<HarnessSession> {
    const { options } = this;
    const model = task.model;
    if (!model)
      throw new HarnessStartError(
        'The oz harness needs a model from the catalogue, and none was resolved for this run',
        'integration_not_configured',
      );
    sink.input(JSON.stringify(taskMessage(task)));
    const { OzAgentLoop, OzStop, languageModel, historyMessages, connectMcpServers, messagingToolsFor } =
      await agentModules();
    const continuing = task.history.length > 0;
    const said = saidNow(task);
    const env = scrubbedEnvironment(task.env, await workspaceHome(task.workspace, task.workspaceOwner));
    let mcp: McpTools | undefined;
    if (task.mcpServers && Object.keys(task.mcpServers).length > 0) {
      try {
        mcp = await connectMcpServers(task.mcpServers, {
          workspace: task.workspace,
          env,
          sandbox: options.sandbox,
          hiddenPaths: options.hiddenPaths,
          network: options.network,
          addressPolicy: options.addressPolicy,
          log: sink.diagnostic,
        });
      } catch (error) {
        return failedAtStart(sink, (error as Error).message);
      }
    }
    const controller = new AbortController();
    const timer = setTimeout(() => {
      const minutes = options.timeoutMinutes;
      controller.abort(
        new OzStop(`The run reached its time limit of ${minutes} minute${minutes === 1 ? '' : 's'}`, 'budget_exceeded'),
      );
    }, options.timeoutMinutes * 60_000);
    const loop = new OzAgentLoop({
      model: languageModel(model),
      workspace: task.workspace,
      ...(task.workspaceOwner ? { workspaceOwner: task.workspaceOwner } : {}),
      prompt: said.join('\n\n') || 'Continue where you left off.',
      basePrompt: task.basePrompt,
      history: continuing ? historyMessages(task.history) : [],
      env,
      extraTools: { ...messagingToolsFor(task.env, controller.signal), ...mcp?.tools },
      maxSteps: options.maxSteps,
      signal: controller.signal,
      shell: sandboxedShell({
        mode: options.sandbox,
        workspace: task.workspace,
        hiddenPaths: options.hiddenPaths,
        allowNetwork: options.network,
      }),
      onEvent: (event) => sink.output(JSON.stringify(event)),
    });
    let cancelled = false;
    const exited: Promise<SandboxExit> = loop
      .run()
      .then((result) => (result.final.type === 'failed' ? 1 : 0))
      .catch((error: unknown) => {
        sink.diagnostic(`the oz agent stopped unexpectedly: ${error instanceof Error ? error.message : String(error)}`);
        return 1;
      })
      .then(async (code) => {
        clearTimeout(timer);
        await mcp?.close();
        return { code, signal: null, timedOut: false, killed: cancelled, outputTruncated: false };
      });
    return {
      acceptsInput: true,
      send(text: string): boolean {
        if (!loop.inject(text)) return false;
        sink.input(JSON.stringify({ type: 'user_message', text } satisfies UserMessage));
        return true;
      },
      async cancel() {
        cancelled = true;
        controller.abort(new OzStop('The run was cancelled'));
        await exited;
      },
      exited,
    };
  }
}

/** A session that ended before the agent started: the reason is its `failed` event, so the run says it. */
function failedAtStart(sink: HarnessSink, message: string): HarnessSession {
  sink.output(JSON.stringify({ type: 'failed', message, error_code: 'integration_not_configured' }));
  return {
    acceptsInput: false,
    send: () => false,
    cancel: async () => undefined,
    exited: Promise.resolve({ code: 1, signal: null, timedOut: false, killed: false, outputTruncated: false }),
  };
}
