import type { ResolvedDefinition } from '../../mcp/index.js';
import type { ResolvedModel } from '../../models/index.js';
import type { TaskOfExecution } from '../../runs/index.js';
import type { FileOwner } from '../workspace/files.js';

/**
 * One execution's worth of work for a harness: the run's prompt plus everything said since, and where to work.
 * `history` is the earlier executions' transcript, so a harness can resume the conversation.
 */
export interface HarnessTask extends TaskOfExecution {
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
