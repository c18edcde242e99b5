import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import type { AgentCli } from '../../src/execution/harnesses/cli/index.js';
import {
  AnthropicServer,
  GeminiServer,
  OpenAIResponsesServer,
  type ScriptedModelServer,
  type ScriptedTurn,
} from '../support/model-servers/index.js';

/**
 * Real runs of the coding-agent CLIs against the scripted model servers: where the installed CLIs are, a git
 * workspace to run in, and each CLI's script. The model reads hello.txt with the CLI's shell tool, changes it with
 * the CLI's own edit tool, runs a failing command, then answers. The same runs produced fixtures/*.jsonl.
 */

export type CliName = AgentCli['name'];

/** Where scripts/install-agent-clis.sh put the CLIs. */
export const AGENT_CLIS_DIR =
  process.env.HANGAR_AGENT_CLIS_DIR ??
  (process.getuid?.() === 0 ? '/opt/hangar/agent-clis' : path.join(os.homedir(), '.cache', 'hangar', 'agent-clis'));

export const PROMPT = 'Make hello.txt greet the world.';
export const ANSWER = 'I changed hello.txt to greet the world.';

/** Each CLI's provider, its server, and the model's turns for a workspace (file tools take absolute paths). */
export const CLI_SETUPS: Record<
  CliName,
  {
    provider: 'ANTHROPIC' | 'OPENAI' | 'GOOGLE';
    server: () => ScriptedModelServer & { readonly baseURL: string };
    turns: (workspace: string) => ScriptedTurn[];
  }
> = {
  claude: {
    provider: 'ANTHROPIC',
    server: () => new AnthropicServer(),
    turns: (workspace) => [
      {
        text: 'Let me look at the file.',
        toolCalls: [{ name: 'Bash', input: { command: 'cat hello.txt', description: 'Show hello.txt' } }],
        usage: { input: 100, output: 20 },
      },
      // Claude Code refuses to edit a file it has not read.
      {
        toolCalls: [{ name: 'Read', input: { file_path: `${workspace}/hello.txt` } }],
        usage: { input: 110, output: 10 },
      },
      {
        toolCalls: [
          {
            name: 'Edit',
            input: { file_path: `${workspace}/hello.txt`, old_string: 'hello', new_string: 'hello world' },
          },
        ],
        usage: { input: 120, output: 30 },
      },
      {
        toolCalls: [{ name: 'Bash', input: { command: 'exit 3', description: 'Fail' } }],
        usage: { input: 125, output: 5 },
      },
      { text: ANSWER, usage: { input: 130, output: 8 } },
    ],
  },
  codex: {
    provider: 'OPENAI',
    server: () => new OpenAIResponsesServer(),
    turns: () => [
      {
        text: 'Let me look at the file.',
        toolCalls: [{ name: 'exec_command', input: { cmd: 'cat hello.txt' } }],
        usage: { input: 100, output: 20 },
      },
      // Codex offers apply_patch as a tool only to models it knows; through the shell it is intercepted all the same.
      {
        toolCalls: [
          {
            name: 'exec_command',
            input: {
              cmd: "apply_patch <<'PATCH'\n*** Begin Patch\n*** Update File: hello.txt\n@@\n-hello\n+hello world\n*** End Patch\nPATCH",
            },
          },
        ],
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
      {
        text: 'Let me look at the file.',
        toolCalls: [{ name: 'run_shell_command', input: { command: 'cat hello.txt', description: 'Show hello.txt' } }],
        usage: { input: 100, output: 20 },
      },
      {
        toolCalls: [
          {
            name: 'replace',
            input: {
              file_path: `${workspace}/hello.txt`,
              instruction: 'Greet the world',
              old_string: 'hello',
              new_string: 'hello world',
            },
          },
        ],
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

const ALL_CLIS = ['claude', 'codex', 'gemini'] as const;

/**
 * Why the whole-service CLI tests skip here: a CLI is not installed. In CI the CLIs are installed by .ci/run, so
 * their absence fails the tests instead of skipping them.
 */
export function missingClis(): string | false {
  const missing = ALL_CLIS.filter((name) => !installedBinary(name));
  return missing.length > 0 && !process.env.CI
    ? `not installed here: ${missing.join(', ')} (run scripts/install-agent-clis.sh)`
    : false;
}

type Price = { input: number; output: number };

/**
 * An operator file in a new temporary directory (the caller removes it): the installed CLIs as built-in harnesses,
 * and one catalogue model per CLI on its scripted model server, `<cli>-test`. Claude's key variable is never set
 * (its runs name a team secret); codex's and gemini's are `<keyPrefix>_OPENAI_KEY` and `<keyPrefix>_GOOGLE_KEY`.
 */
export function writeCliOperatorFile(
  servers: Record<CliName, { readonly baseURL: string }>,
  keyPrefix: string,
  prices: Record<CliName, Price> = {
    claude: { input: 0, output: 0 },
    codex: { input: 0, output: 0 },
    gemini: { input: 0, output: 0 },
  },
): { directory: string; file: string } {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-cli-operator-'));
  const file = path.join(directory, 'hangar.yaml');
  const paths = Object.fromEntries(
    ALL_CLIS.map((name) => [name, { path: installedBinary(name) ?? `/missing/${name}`, timeout_minutes: 3 }]),
  );
  const model = (name: CliName, provider: string, keyEnv: string) => ({
    id: `${name}-test`,
    provider,
    model: `${name}-test-model`,
    base_url: servers[name].baseURL,
    api_key_env: keyEnv,
    cost: prices[name],
  });
  const models = [
    model('claude', 'ANTHROPIC', `${keyPrefix}_UNSET_KEY`),
    model('codex', 'OPENAI', `${keyPrefix}_OPENAI_KEY`),
    model('gemini', 'GOOGLE', `${keyPrefix}_GOOGLE_KEY`),
  ];
  fs.writeFileSync(file, YAML.stringify({ builtin_harnesses: paths, models }));
  return { directory, file };
}

/** A temporary git repository with hello.txt committed; its real path, as the CLIs report it. */
export function gitWorkspace(): string {
  const workspace = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-cli-')));
  fs.writeFileSync(path.join(workspace, 'hello.txt'), 'hello\n');
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=Hangar Test', '-c', 'user.email=test@hangar.invalid', ...args], {
      cwd: workspace,
      stdio: 'ignore',
    });
  git('init', '--quiet');
  git('add', '.');
  git('commit', '--quiet', '-m', 'first commit');
  return workspace;
}
