import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import {
  languageModelFor,
  ModelConfigurationError,
  OzAgentLoop,
  type OzLoopOptions,
  OzStop,
  runOzAgent,
  runShell,
} from '../../src/execution/harnesses/oz/index.js';
import type { ModelDefinition } from '../../src/models/catalogue.js';
import type { HarnessEvent } from '../../src/runs/index.js';
import { parseEvent } from '../../src/runs/index.js';
import {
  AnthropicServer,
  GeminiServer,
  OpenAIChatServer,
  OpenAIResponsesServer,
  type ScriptedModelServer,
} from '../support/model-servers/index.js';

(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

const cleanup: Array<() => Promise<void> | void> = [];
after(async () => {
  for (const step of cleanup.reverse()) await step();
});

/** A real git repository in a temp directory with `files` committed on main. */
function gitWorkspace(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-oz-'));
  cleanup.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=Oz Test', '-c', 'user.email=oz@hangar.invalid', ...args], {
      cwd: dir,
      stdio: 'pipe',
    });
  git('init', '--quiet', '--initial-branch=main');
  for (const [file, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), content);
  }
  git('add', '--all');
  git('commit', '--quiet', '-m', 'first');
  return dir;
}

type Provider = 'ANTHROPIC' | 'UNKNOWN' | 'OPENAI' | 'GOOGLE';
const KEY_ENV = 'OZ_TEST_API_KEY';

async function serverFor(provider: Provider): Promise<ScriptedModelServer & { baseURL: string }> {
  const server =
    provider === 'ANTHROPIC'
      ? new AnthropicServer()
      : provider === 'UNKNOWN'
        ? new OpenAIChatServer()
        : provider === 'OPENAI'
          ? new OpenAIResponsesServer()
          : new GeminiServer();
  await server.listen();
  cleanup.push(() => server.close());
  return server;
}

/** The catalogue entry pointing at the scripted server, through the same model selection the harness uses. */
function catalogueModel(provider: Provider, baseURL: string): ModelDefinition {
  const names: Record<Provider, string> = {
    ANTHROPIC: 'claude-sonnet-4-20250514',
    UNKNOWN: 'qwen-coder',
    OPENAI: 'gpt-4.1',
    GOOGLE: 'gemini-2.5-flash',
  };
  return {
    id: `test-${provider.toLowerCase()}`,
    display_name: provider,
    provider,
    provider_model: names[provider],
    base_url: baseURL,
    ...(provider === 'UNKNOWN' ? {} : { api_key_env: KEY_ENV }),
    vision_supported: false,
    cost: { input: 1, output: 2 },
  };
}

async function runLoop(
  server: ScriptedModelServer & { baseURL: string },
  provider: Provider,
  workspace: string,
  overrides: Partial<OzLoopOptions> = {},
) {
  const events: HarnessEvent[] = [];
  const model = languageModelFor(catalogueModel(provider, server.baseURL), { [KEY_ENV]: 'test-key' });
  const result = await runOzAgent({
    model,
    workspace,
    prompt: 'Change the greeting',
    maxRetries: 0,
    onEvent: (event) => events.push(event),
    ...overrides,
  });
  // Every event is one the command-harness protocol accepts, so the existing transcript machinery reads it.
  for (const event of events)
    assert.deepEqual(parseEvent(JSON.stringify(event)), JSON.parse(JSON.stringify(event)), JSON.stringify(event));
  return { events, result };
}

const of = <T extends HarnessEvent['type']>(events: HarnessEvent[], type: T) =>
  events.filter((event): event is Extract<HarnessEvent, { type: T }> => event.type === type);

describe('the oz loop edits files in a git workspace through its tools', () => {
  for (const provider of ['ANTHROPIC', 'UNKNOWN', 'OPENAI', 'GOOGLE'] as const) {
    test(`through ${provider === 'UNKNOWN' ? 'an OpenAI-compatible server' : provider}`, async () => {
      const workspace = gitWorkspace({
        'src/greet.js': 'export const greet = () => "Hello";\n',
        'README.md': '# demo\n',
      });
      const server = await serverFor(provider);
      server.script(
        {
          text: 'Let me look at the code.',
          toolCalls: [{ name: 'search_files', input: { pattern: 'Hello' } }],
          usage: { input: 100, output: 10 },
        },
        { toolCalls: [{ name: 'read_file', input: { path: 'src/greet.js' } }], usage: { input: 120, output: 10 } },
        {
          toolCalls: [
            { name: 'edit_file', input: { path: 'src/greet.js', old_string: '"Hello"', new_string: '"Goodbye"' } },
            { name: 'write_file', input: { path: 'docs/NOTES.md', content: 'greeting changed\n' } },
          ],
          usage: { input: 140, output: 20 },
        },
        {
          toolCalls: [{ name: 'run_command', input: { command: 'git status --porcelain && ls docs' } }],
          usage: { input: 160, output: 10 },
        },
        { text: 'Changed the greeting to Goodbye.', usage: { input: 180, output: 8 } },
      );

      const { events, result } = await runLoop(server, provider, workspace);

      assert.equal(
        fs.readFileSync(path.join(workspace, 'src/greet.js'), 'utf8'),
        'export const greet = () => "Goodbye";\n',
      );
      assert.equal(fs.readFileSync(path.join(workspace, 'docs/NOTES.md'), 'utf8'), 'greeting changed\n');
      assert.deepEqual(result.final, { type: 'done', summary: 'Changed the greeting to Goodbye.' });
      assert.deepEqual(events.at(-1), result.final);
      assert.equal(result.steps, 5);
      assert.equal(server.requests.length, 5);
      assert.deepEqual(result.usage, { input_tokens: 700, output_tokens: 58 });
      assert.equal(of(events, 'usage').length, 5);
      assert.equal(of(events, 'usage')[0]!.inference_cost, undefined);

      // The events tell the story in order: text, then each tool call followed by its result.
      assert.equal(events[0]!.type, 'text');
      assert.deepEqual(
        of(events, 'tool_call').map((event) => event.name),
        ['search_files', 'read_file', 'edit_file', 'write_file', 'run_command'],
      );
      assert.deepEqual(
        of(events, 'tool_result').map((event) => event.status),
        ['completed', 'completed', 'completed', 'completed', 'completed'],
      );
      assert.equal(of(events, 'tool_call')[4]!.category, 'command');

      // Each request carried the previous tool results back to the model.
      const sent = server.requests.map((request) => JSON.stringify(request.body));
      assert.match(sent[1]!, /src\/greet\.js:1: export const greet/);
      assert.match(sent[2]!, /export const greet = \(\) => \\+"Hello\\+"/);
      assert.match(sent[3]!, /replaced/);
      assert.match(sent[4]!, /M src\/greet\.js/);
      assert.match(sent[4]!, /NOTES\.md/);
      // The system prompt describes the workspace and the tools.
      assert.match(sent[0]!, /git repository on branch main/);
      assert.match(sent[0]!, /report_artifact/);
    });
  }
});

test('reports artifacts and ends with ask_user when the model asks the user', async () => {
  const workspace = gitWorkspace({ 'plan.md': '# Plan\n' });
  const server = await serverFor('ANTHROPIC');
  server.script(
    {
      toolCalls: [
        { name: 'report_artifact', input: { artifact_type: 'PLAN', title: 'Migration plan', content: '1. Do it' } },
        { name: 'report_artifact', input: { artifact_type: 'FILE', path: 'plan.md', description: 'the plan' } },
        {
          name: 'report_artifact',
          input: { artifact_type: 'PULL_REQUEST', url: 'https://github.com/acme/app/pull/7', branch: 'oz/change' },
        },
        { name: 'report_artifact', input: { artifact_type: 'EXTERNAL_REFERENCE', url: 'https://example.com/doc' } },
      ],
    },
    {
      text: 'One question first.',
      toolCalls: [{ name: 'ask_user', input: { question: 'Which database should I migrate?' } }],
    },
  );
  const { events, result } = await runLoop(server, 'ANTHROPIC', workspace);
  // The tools of one step run one at a time, in call order.
  assert.deepEqual(
    of(events, 'artifact').map((event) => [event.artifact_type, event.data]),
    [
      ['PLAN', { title: 'Migration plan', content: '1. Do it' }],
      ['FILE', { path: 'plan.md', description: 'the plan' }],
      ['PULL_REQUEST', { url: 'https://github.com/acme/app/pull/7', branch: 'oz/change' }],
      ['EXTERNAL_REFERENCE', { url: 'https://example.com/doc' }],
    ],
  );
  assert.deepEqual(result.final, { type: 'ask_user', question: 'Which database should I migrate?' });
  assert.equal(server.requests.length, 2);
  assert.deepEqual(events.at(-1), result.final);
  // The conversation kept for a resume ends with the ask_user call's result; a follow-up continues it.
  assert.equal(result.messages.at(-1)!.role, 'tool');
  server.script({ text: 'Migrating Postgres.' });
  const resumed = await runLoop(server, 'ANTHROPIC', workspace, {
    history: result.messages,
    prompt: 'Postgres, please',
  });
  assert.deepEqual(resumed.result.final, { type: 'done', summary: 'Migrating Postgres.' });
  assert.equal(server.requests.length, 3);
  const lastRequest = JSON.stringify(server.requests.at(-1)!.body);
  assert.match(lastRequest, /Which database should I migrate\?/);
  assert.match(lastRequest, /Postgres, please/);
});

test('stops at the step limit with a clear failure', async () => {
  const workspace = gitWorkspace({ 'a.txt': 'a\n' });
  const server = await serverFor('UNKNOWN');
  const again = { toolCalls: [{ name: 'list_files', input: {} }] };
  server.script(again, again, again, again);
  const { result } = await runLoop(server, 'UNKNOWN', workspace, { maxSteps: 3 });
  assert.equal(result.final.type, 'failed');
  assert.match((result.final as { message: string }).message, /after 3 steps, its step limit/);
  assert.equal((result.final as { error_code?: string }).error_code, 'budget_exceeded');
  assert.equal(server.requests.length, 3);
});

test('refuses paths outside the workspace, and the model hears why', async () => {
  const workspace = gitWorkspace({ 'a.txt': 'a\n' });
  const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-oz-outside-'));
  cleanup.push(() => fs.rmSync(outside, { recursive: true, force: true }));
  fs.writeFileSync(path.join(outside, 'secret.txt'), 'top secret');
  fs.symlinkSync(outside, path.join(workspace, 'link'));
  const server = await serverFor('ANTHROPIC');
  server.script(
    {
      toolCalls: [
        { name: 'read_file', input: { path: `../${path.basename(outside)}/secret.txt` } },
        { name: 'write_file', input: { path: path.join(outside, 'planted.txt'), content: 'x' } },
        { name: 'read_file', input: { path: 'link/secret.txt' } },
        { name: 'edit_file', input: { path: 'a.txt', old_string: 'zzz', new_string: 'y' } },
        { name: 'run_command', input: { command: 'pwd', cwd: '..' } },
      ],
    },
    { text: 'I cannot do that.' },
  );
  const { events, result } = await runLoop(server, 'ANTHROPIC', workspace);
  assert.equal(result.final.type, 'done');
  const results = of(events, 'tool_result');
  assert.deepEqual(
    results.map((event) => event.id),
    of(events, 'tool_call').map((event) => event.id),
  );
  assert.deepEqual(
    results.map((event) => event.status),
    ['failed', 'failed', 'failed', 'failed', 'failed'],
  );
  for (const index of [0, 1, 2, 4]) assert.match(String(results[index]!.output), /outside the workspace/);
  assert.match(String(results[3]!.output), /not found/);
  assert.equal(fs.existsSync(path.join(outside, 'planted.txt')), false);
  const second = JSON.stringify(server.requests[1]!.body);
  assert.match(second, /outside the workspace/);
  assert.doesNotMatch(second, /top secret/);
});

test('follow-ups injected while it runs reach the model before its next step', async () => {
  const workspace = gitWorkspace({ 'a.txt': 'a\n' });
  const server = await serverFor('UNKNOWN');
  server.script({ toolCalls: [{ name: 'list_files', input: {} }] }, { text: 'Done, including the follow-up.' });
  const events: HarnessEvent[] = [];
  const loop = new OzAgentLoop({
    model: languageModelFor(catalogueModel('UNKNOWN', server.baseURL)),
    workspace,
    prompt: 'List the files',
    maxRetries: 0,
    onEvent: (event) => {
      events.push(event);
      if (event.type === 'tool_call') loop.inject('Also mention the README, please');
    },
  });
  const result = await loop.run();
  assert.equal(result.final.type, 'done');
  const messages = server.requests[1]!.body.messages as Array<{ role: string; content: unknown }>;
  assert.deepEqual(messages.at(-1), { role: 'user', content: 'Also mention the README, please' });
  assert.equal(messages.at(-2)!.role, 'tool');
});

test('a stop (time limit or cancel) kills the running command and fails with the reason', async () => {
  const workspace = gitWorkspace({ 'a.txt': 'a\n' });
  const server = await serverFor('ANTHROPIC');
  server.script(
    { toolCalls: [{ name: 'run_command', input: { command: 'sleep 600 & echo $! > sleeper.pid; wait' } }] },
    { text: 'never' },
  );
  const controller = new AbortController();
  const seen: HarnessEvent[] = [];
  const pidFile = path.join(workspace, 'sleeper.pid');
  // The command writes its pid to a file: no event tells of it.
  const pause = () => new Promise((resolve) => setTimeout(resolve, 20));
  // Stops the loop once the command has started its background process.
  const stopWhenStarted = async () => {
    while (!fs.existsSync(pidFile) || fs.readFileSync(pidFile, 'utf8').trim() === '') await pause();
    controller.abort(new OzStop('The run reached its time limit of 1 minute', 'budget_exceeded'));
  };
  const { result } = await runLoop(server, 'ANTHROPIC', workspace, {
    signal: controller.signal,
    onEvent: (event) => {
      seen.push(event);
      if (event.type === 'tool_call') void stopWhenStarted();
    },
  });
  assert.deepEqual(seen.at(-1), result.final);
  // The command's background process went with its process group.
  const pid = Number(fs.readFileSync(pidFile, 'utf8'));
  const alive = () => {
    try {
      process.kill(pid, 0);
      return !/^State:\s+Z/m.test(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    } catch {
      return false;
    }
  };
  while (alive()) await pause();
  assert.deepEqual(result.final, {
    type: 'failed',
    message: 'The run reached its time limit of 1 minute',
    error_code: 'budget_exceeded',
  });
  assert.equal(server.requests.length, 1);
});

describe('model selection and the shell', () => {
  test('a model without credentials or endpoint is refused with what to set', () => {
    const anthropic: ModelDefinition = {
      id: 'c',
      display_name: 'c',
      provider: 'ANTHROPIC',
      provider_model: 'claude',
      vision_supported: true,
      cost: { input: 1, output: 1 },
    };
    assert.throws(
      () => languageModelFor(anthropic, {}),
      (error: unknown) => error instanceof ModelConfigurationError && /ANTHROPIC_API_KEY/.test(error.message),
    );
    assert.ok(languageModelFor(anthropic, { ANTHROPIC_API_KEY: 'k' }));
    const local: ModelDefinition = { ...anthropic, provider: 'UNKNOWN' };
    assert.throws(() => languageModelFor(local, {}), /base_url/);
  });

  test('a command past its timeout is killed with its process group, and output is capped', async () => {
    const workspace = gitWorkspace({ 'a.txt': 'a\n' });
    const timed = await runShell('echo before; sleep 600', {
      cwd: workspace,
      env: process.env,
      timeoutMs: 300,
      maxOutputBytes: 1000,
    });
    assert.equal(timed.timedOut, true);
    assert.equal(timed.output, 'before\n');
    const capped = await runShell('yes | head -c 5000', {
      cwd: workspace,
      env: process.env,
      timeoutMs: 60_000,
      maxOutputBytes: 100,
    });
    assert.equal(capped.output.length, 100);
    assert.equal(capped.truncatedBytes, 4900);
    assert.equal(capped.exitCode, 0);
  });
});
