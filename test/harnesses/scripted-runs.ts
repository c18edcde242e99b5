import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AgentCli } from '../../src/execution/harnesses/cli/index.js';
import { AnthropicServer, GeminiServer, OpenAIResponsesServer, type ScriptedModelServer, type ScriptedTurn } from '../support/model-servers/index.js';

/**
 * Real runs of the coding-agent CLIs against the scripted model servers: where the installed CLIs are, a git
 * workspace to run in, and each CLI's script. The model reads hello.txt with the CLI's shell tool, changes it with
 * the CLI's own edit tool, runs a failing command, then answers. The same runs produced fixtures/*.jsonl.
 */

export type CliName = AgentCli['name'];

/** Where scripts/install-agent-clis.sh put the CLIs. */
export const AGENT_CLIS_DIR = process.env.HANGAR_AGENT_CLIS_DIR ?? path.join(os.homedir(), '.cache', 'hangar', 'agent-clis');

export const PROMPT = 'Make hello.txt greet the world.';
export const ANSWER = 'I changed hello.txt to greet the world.';

/** Each CLI's provider, its server, and the model's turns for a workspace (file tools take absolute paths). */
export const CLI_SETUPS: Record<CliName, { provider: 'ANTHROPIC' | 'OPENAI' | 'GOOGLE'; server: () => ScriptedModelServer & { readonly baseURL: string }; turns: (workspace: string) => ScriptedTurn[] }> = {
  claude: {
    provider: 'ANTHROPIC',
    server: () => new AnthropicServer(),
    turns: (workspace) => [
      { text: 'Let me look at the file.', toolCalls: [{ name: 'Bash', input: { command: 'cat hello.txt', description: 'Show hello.txt' } }], usage: { input: 100, output: 20 } },
      // Claude Code refuses to edit a file it has not read.
      { toolCalls: [{ name: 'Read', input: { file_path: `${workspace}/hello.txt` } }], usage: { input: 110, output: 10 } },
      { toolCalls: [{ name: 'Edit', input: { file_path: `${workspace}/hello.txt`, old_string: 'hello', new_string: 'hello world' } }], usage: { input: 120, output: 30 } },
      { toolCalls: [{ name: 'Bash', input: { command: 'exit 3', description: 'Fail' } }], usage: { input: 125, output: 5 } },
      { text: ANSWER, usage: { input: 130, output: 8 } },
    ],
  },
  codex: {
    provider: 'OPENAI',
    server: () => new OpenAIResponsesServer(),
    turns: () => [
      { text: 'Let me look at the file.', toolCalls: [{ name: 'exec_command', input: { cmd: 'cat hello.txt' } }], usage: { input: 100, output: 20 } },
      // Codex offers apply_patch as a tool only to models it knows; through the shell it is intercepted all the same.
      {
        toolCalls: [{ name: 'exec_command', input: { cmd: "apply_patch <<'PATCH'\n*** Begin Patch\n*** Update File: hello.txt\n@@\n-hello\n+hello world\n*** End Patch\nPATCH" } }],
        usage: { input: 120, output: 30 },
      },
      { toolCalls: [{ name: 'exec_command', input: { cmd: 'exit 3' } }], usage: { input: 125, output: 5 } },
      { text: ANSWER, usage: { input: 130, output: 8 } },
    ],
  },
  gemini: {
    provider: 'GOOGLE',
    server: () => new GeminiServer(),
    turns: (workspace) => [
      { text: 'Let me look at the file.', toolCalls: [{ name: 'run_shell_command', input: { command: 'cat hello.txt', description: 'Show hello.txt' } }], usage: { input: 100, output: 20 } },
      {
        toolCalls: [{ name: 'replace', input: { file_path: `${workspace}/hello.txt`, instruction: 'Greet the world', old_string: 'hello', new_string: 'hello world' } }],
        usage: { input: 120, output: 30 },
      },
      { toolCalls: [{ name: 'run_shell_command', input: { command: 'exit 3' } }], usage: { input: 125, output: 5 } },
      { text: ANSWER, usage: { input: 130, output: 8 } },
    ],
  },
};

/** The installed CLI, or undefined when scripts/install-agent-clis.sh has not run here. */
export function installedBinary(name: CliName): string | undefined {
  const file = path.join(AGENT_CLIS_DIR, 'bin', name);
  return fs.existsSync(file) ? file : undefined;
}

/** A temporary git repository with hello.txt committed; its real path, as the CLIs report it. */
export function gitWorkspace(): string {
  const workspace = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-cli-')));
  fs.writeFileSync(path.join(workspace, 'hello.txt'), 'hello\n');
  const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=Hangar Test', '-c', 'user.email=test@hangar.invalid', ...args], { cwd: workspace, stdio: 'ignore' });
  git('init', '--quiet');
  git('add', '.');
  git('commit', '--quiet', '-m', 'first commit');
  return workspace;
}
