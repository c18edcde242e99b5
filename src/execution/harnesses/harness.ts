import type { SandboxExit } from '../sandbox/types.js';
import type { ResolvedDefinition } from '../../mcp/definition.js';
import type { ResolvedModel } from './cli/agent-cli.js';
import type { HarnessEvent } from './protocol.js';
import type { FileOwner } from '../workspace-files.js';

/**
 * One execution's worth of work for a harness: the run's prompt plus everything said since, and where to work.
 * `history` is the earlier executions' transcript, so a harness can resume the conversation.
 */
export interface HarnessTask {
  runId: string;
  executionId: number;
  /** `agent` is the run's own agent; `debug` starts in a workspace kept after a failed environment setup. */
  kind: 'agent' | 'debug';
  conversationId: string;
  prompt: string;
  basePrompt: string | null;
  /** Follow-up messages that joined this execution before it started, oldest first. */
  followups: string[];
  history: TranscriptLine[];
  workspace: string;
  /** Who owns what the server creates in the workspace (the run's user); unset: the server's own user. */
  workspaceOwner?: FileOwner;
  /** Run-scoped variables (run ID, API base URL, task token) to add to the harness's environment. */
  env: Record<string, string>;
  agentConfig: Record<string, unknown>;
  /** The catalogue model the run uses, with its credentials; set for the built-in harness types (oz and the CLIs). */
  model?: ResolvedModel;
  /** The run's MCP servers (`config.mcp_servers`), resolved with secrets; set for the built-in harness types. */
  mcpServers?: Record<string, ResolvedDefinition>;
}

/** One line of a run's raw transcript: what went into the harness (`input`) or what it wrote (`output`). */
export interface TranscriptLine {
  executionId: number;
  stream: 'input' | 'output';
  line: string;
  at: Date;
}

export interface HarnessSession {
  /** Whether `send` reaches the running harness; when false, follow-ups wait for the next execution. */
  readonly acceptsInput: boolean;
  /** Delivers a follow-up message to the running harness; false when it cannot take it now. */
  send(message: string): boolean;
  /** Stops the harness and everything it started; resolves when they are gone. */
  cancel(): Promise<void>;
  exited: Promise<SandboxExit>;
}

export interface HarnessSink {
  /** Every line the harness writes to its event stream, in order (the executor keeps it as the transcript). */
  output(line: string): void;
  /** What was written to the harness (the task and follow-ups), for the transcript. */
  input(line: string): void;
  /** Diagnostics the harness writes besides its event stream (stderr); the last lines explain a failure. */
  diagnostic(line: string): void;
}

/** Everything that runs an agent: the operator's `command` harnesses now, the coding-agent CLIs later. */
export interface Harness {
  readonly name: string;
  start(task: HarnessTask, sink: HarnessSink): Promise<HarnessSession>;
  /**
   * The protocol events on a line of the harness's own stream format (a CLI's stream JSON); absent for harnesses
   * that write the command-harness protocol itself.
   */
  translate?(line: string): HarnessEvent[];
}

/** The harness cannot start for a reason the run's owner or the operator must fix; the run fails with `errorCode`. */
export class HarnessStartError extends Error {
  override name = 'HarnessStartError';
  constructor(
    message: string,
    readonly errorCode: string,
  ) {
    super(message);
  }
}
