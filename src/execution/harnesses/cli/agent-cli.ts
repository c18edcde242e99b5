import type { ResolvedDefinition } from '../../../mcp/index.js';
import type { ResolvedModel } from '../../../models/index.js';
import type { HarnessEvent } from '../../../runs/index.js';
import type { WorkspaceFiles } from '../../workspace/files.js';

/** What a CLI is started with: its arguments (after the binary) and the variables it needs besides the sandbox's. */
export interface CliInvocation {
  args: string[];
  env: Record<string, string>;
  /**
   * Written to the CLI's stdin, which is then closed: the prompt. On the command line it would show in `ps` and
   * could pass the kernel's 128 KiB limit on one argument (a long conversation, a long base prompt).
   */
  stdin: string;
}

export interface CliInvocationInput {
  /** The whole task as one prompt: base prompt, earlier conversation (for a continuation), prompt, follow-ups. */
  prompt: string;
  model: ResolvedModel;
  workspace: string;
  /** The run's own HOME (inside the workspace); a CLI's settings files go here, written through `writeHomeFile`. */
  home: string;
  /** Writes a file relative to HOME the way the server writes into a workspace: no links followed, owned by the run's user. */
  writeHomeFile(relative: string, content: string): Promise<void>;
  /** The run's MCP servers (`config.mcp_servers`, secrets filled in), for the CLI's own MCP configuration. */
  mcpServers: Record<string, ResolvedDefinition>;
  /** The CLI's own session of the conversation, put back into `home`: the CLI resumes it, and `prompt` is what is new. */
  resume?: { id: string; file: string };
}

/** Where a CLI keeps a session's file in its HOME, relative to it, and the session's ID. */
export interface SessionFile {
  id: string;
  file: string;
}

/**
 * How a CLI's own session survives from one execution to the next, whose workspace (and HOME) is new: the file
 * it wrote is found after the run, kept with the transcript, and put back where the CLI looks for it.
 */
export interface CliSessions {
  /** The session file the run left in the workspace's HOME (a fresh HOME holds one session), if any. */
  find(workspace: WorkspaceFiles): Promise<SessionFile | undefined>;
  /** Where a kept session file goes for a run in `workspace`, relative to HOME (some CLIs file sessions by directory). */
  placeFor(session: SessionFile, workspace: string): string;
}

/**
 * A third-party coding-agent CLI: how to start it headless with a streaming JSON output, and how to read that
 * stream. The raw stream is the run's transcript; `translate` turns each of its lines into the events of the
 * command-harness protocol (none for lines that carry nothing), both while the run goes and later when the
 * conversation is normalized from the transcript.
 */
export interface AgentCli {
  readonly name: 'claude' | 'codex' | 'gemini';
  /** The executable looked up on PATH when the operator configured no path. */
  readonly binary: string;
  /** The npm package that provides it, for the error message when it is missing. */
  readonly npmPackage: string;
  invocation(input: CliInvocationInput): Promise<CliInvocation>;
  translate(line: string): HarnessEvent[];
  /** Native resume; without it, a continuation gets a recap of the conversation in its prompt. */
  readonly sessions?: CliSessions;
}
