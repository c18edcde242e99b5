/**
 * How the CLI harnesses start their CLIs, without running them: each CLI's arguments and environment, the one
 * prompt built from the task (with the recap of the earlier conversation for a continuation), and where a
 * binary is found.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { AGENT_CLIS, locateBinary, type ResolvedModel } from '../../src/execution/harnesses/cli/index.js';
import { cliPrompt } from '../../src/execution/harnesses/cli/prompt.js';
import type { HarnessTask, TranscriptLine } from '../../src/execution/harnesses/harness.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-cli-invocation-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));

function input(model: ResolvedModel) {
  const home = fs.mkdtempSync(path.join(root, 'home-'));
  const writeHomeFile = async (relative: string, content: string) => {
    fs.mkdirSync(path.dirname(path.join(home, relative)), { recursive: true });
    fs.writeFileSync(path.join(home, relative), content, { mode: 0o600 });
  };
  return { prompt: 'Fix the tests.', model, workspace: root, home, writeHomeFile, mcpServers: {} };
}

describe('CLI invocations', () => {
  test('claude: print mode with stream JSON, permissions bypassed, the endpoint without its /v1', async () => {
    const model: ResolvedModel = {
      id: 'c',
      provider: 'ANTHROPIC',
      providerModel: 'claude-x',
      baseUrl: 'http://127.0.0.1:9/v1',
      apiKey: 'sk-a',
    };
    const { args, env, stdin } = await AGENT_CLIS.claude.invocation(input(model));
    assert.deepEqual(args, [
      '-p',
      '--output-format',
      'stream-json',
      '--verbose',
      '--model',
      'claude-x',
      '--permission-mode',
      'bypassPermissions',
    ]);
    assert.equal(stdin, 'Fix the tests.');
    assert.equal(env.ANTHROPIC_API_KEY, 'sk-a');
    assert.equal(env.ANTHROPIC_BASE_URL, 'http://127.0.0.1:9');
    assert.equal(env.ANTHROPIC_DEFAULT_HAIKU_MODEL, 'claude-x');
    assert.equal(env.IS_SANDBOX, '1');
    assert.equal(env.CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC, '1');
    // Anthropic's own endpoint: no base URL, and Claude Code picks its side models itself.
    const direct = await AGENT_CLIS.claude.invocation(input({ ...model, baseUrl: undefined }));
    assert.equal(direct.env.ANTHROPIC_BASE_URL, undefined);
    assert.equal(direct.env.ANTHROPIC_DEFAULT_HAIKU_MODEL, undefined);
  });

  test('codex: exec --json with its own model provider for the endpoint, the key in OPENAI_API_KEY', async () => {
    const model: ResolvedModel = {
      id: 'o',
      provider: 'OPENAI',
      providerModel: 'gpt-x',
      baseUrl: 'http://127.0.0.1:9/v1?"q"',
      apiKey: 'sk-o',
    };
    const { args, env, stdin } = await AGENT_CLIS.codex.invocation(input(model));
    assert.deepEqual(args.slice(0, 6), [
      'exec',
      '--json',
      '--skip-git-repo-check',
      '--dangerously-bypass-approvals-and-sandbox',
      '--model',
      'gpt-x',
    ]);
    assert.equal(args.at(-1), '-');
    const settings = args.filter((_, index) => args[index - 1] === '-c');
    assert.ok(settings.includes('model_provider="hangar"'));
    // The URL is a TOML string, quotes escaped.
    assert.ok(
      settings.includes(
        'model_providers.hangar={name="Hangar",base_url="http://127.0.0.1:9/v1?\\"q\\"",env_key="OPENAI_API_KEY",wire_api="responses",supports_websockets=false}',
      ),
      settings.join('\n'),
    );
    assert.ok(settings.includes('analytics.enabled=false'));
    assert.deepEqual(env, { OPENAI_API_KEY: 'sk-o' });
    assert.equal(stdin, 'Fix the tests.');
    const direct = await AGENT_CLIS.codex.invocation(input({ ...model, baseUrl: undefined }));
    assert.ok(direct.args.some((arg) => arg.includes('base_url="https://api.openai.com/v1"')));
  });

  test('gemini: stream JSON, YOLO, a trusted workspace, API-key sign-in and no telemetry in its settings', async () => {
    const model: ResolvedModel = {
      id: 'g',
      provider: 'GOOGLE',
      providerModel: 'gemini-x',
      baseUrl: 'http://127.0.0.1:9/v1beta',
      apiKey: 'gk',
    };
    const given = input(model);
    const { args, env, stdin } = await AGENT_CLIS.gemini.invocation(given);
    assert.deepEqual(args, [
      '--output-format',
      'stream-json',
      '--model',
      'gemini-x',
      '--approval-mode',
      'yolo',
      '--skip-trust',
    ]);
    assert.deepEqual(env, { GEMINI_API_KEY: 'gk', GOOGLE_GEMINI_BASE_URL: 'http://127.0.0.1:9' });
    assert.equal(stdin, 'Fix the tests.');
    const settings = JSON.parse(fs.readFileSync(path.join(given.home, '.gemini', 'settings.json'), 'utf8'));
    assert.equal(settings.security.auth.selectedType, 'gemini-api-key');
    assert.equal(settings.privacy.usageStatisticsEnabled, false);
    assert.equal(settings.telemetry.enabled, false);
    assert.equal(settings.general.enableAutoUpdate, false);
  });
});

describe('CLI invocations: resuming a session, and MCP servers', () => {
  const model: ResolvedModel = { id: 'm', provider: 'ANTHROPIC', providerModel: 'm-x', apiKey: 'k' };
  const servers = {
    tickets: { command: 'node', args: ['tickets.mjs'], env: { TOKEN: 'secret-1' } },
    docs: { url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer secret-2' } },
  };

  test('claude: --resume with the session ID; MCP servers in a 0600 file, only those', async () => {
    const given = { ...input(model), mcpServers: servers, resume: { id: 'abc', file: '.claude/projects/x/abc.jsonl' } };
    const { args } = await AGENT_CLIS.claude.invocation(given);
    assert.deepEqual(args.slice(args.indexOf('--resume'), args.indexOf('--resume') + 2), ['--resume', 'abc']);
    const file = args[args.indexOf('--mcp-config') + 1]!;
    assert.ok(args.includes('--strict-mcp-config'));
    assert.ok(!args.join(' ').includes('secret'), 'no secret on the command line');
    assert.equal(fs.statSync(file).mode & 0o777, 0o600);
    assert.deepEqual(JSON.parse(fs.readFileSync(file, 'utf8')), {
      mcpServers: {
        tickets: servers.tickets,
        docs: { type: 'http', url: servers.docs.url, headers: servers.docs.headers },
      },
    });
  });

  test('codex: exec resume <id>; MCP servers in the fresh HOME config.toml', async () => {
    const given = {
      ...input({ ...model, provider: 'OPENAI' }),
      mcpServers: servers,
      resume: { id: '0190-id', file: '.codex/sessions/x.jsonl' },
    };
    const { args } = await AGENT_CLIS.codex.invocation(given);
    assert.deepEqual(args.slice(0, 2), ['exec', 'resume']);
    assert.deepEqual(args.slice(-2), ['0190-id', '-']);
    assert.ok(!args.join(' ').includes('secret'));
    const toml = fs.readFileSync(path.join(given.home, '.codex', 'config.toml'), 'utf8');
    assert.equal(
      toml,
      [
        '[mcp_servers."tickets"]',
        'command = "node"',
        'args = ["tickets.mjs"]',
        'env = { "TOKEN" = "secret-1" }',
        '',
        '[mcp_servers."docs"]',
        'url = "https://mcp.example.com/mcp"',
        'http_headers = { "Authorization" = "Bearer secret-2" }',
        '',
      ].join('\n'),
    );
  });

  test('gemini: --session-file in HOME; MCP servers in its settings', async () => {
    const given = {
      ...input({ ...model, provider: 'GOOGLE' }),
      mcpServers: servers,
      resume: { id: 's', file: '.gemini/tmp/p/chats/session-s.jsonl' },
    };
    const { args } = await AGENT_CLIS.gemini.invocation(given);
    assert.deepEqual(args.slice(-2), ['--session-file', path.join(given.home, '.gemini/tmp/p/chats/session-s.jsonl')]);
    const settings = JSON.parse(fs.readFileSync(path.join(given.home, '.gemini', 'settings.json'), 'utf8'));
    assert.deepEqual(settings.mcpServers, {
      tickets: servers.tickets,
      docs: { httpUrl: servers.docs.url, headers: servers.docs.headers },
    });
  });
});

describe('the prompt a CLI starts with', () => {
  const at = new Date();
  const task = (overrides: Partial<HarnessTask>): HarnessTask => ({
    runId: 'run-1',
    executionId: 1,
    kind: 'agent',
    conversationId: 'c',
    prompt: 'Fix the tests.',
    basePrompt: null,
    followups: [],
    history: [],
    workspace: root,
    env: {},
    agentConfig: {},
    ...overrides,
  });
  const none = () => [];
  const taskLine = (executionId: number, prompt: string, followups: string[] = []): TranscriptLine => ({
    executionId,
    stream: 'input',
    line: JSON.stringify({ type: 'task', execution_id: executionId, kind: 'agent', prompt, followups }),
    at,
  });
  const output = (executionId: number, event: unknown): TranscriptLine => ({
    executionId,
    stream: 'output',
    line: JSON.stringify(event),
    at,
  });

  test('a first execution is its prompt and follow-ups, after the base prompt as instructions', () => {
    assert.equal(cliPrompt(task({}), none), 'Fix the tests.');
    assert.equal(
      cliPrompt(task({ basePrompt: 'Be brief.', followups: ['Also the docs.'] }), none),
      '<instructions>\nBe brief.\n</instructions>\n\nFix the tests.\n\nAlso the docs.',
    );
  });

  test('a continuation recaps the conversation from protocol events and the CLI’s own stream, then the follow-ups', () => {
    const history: TranscriptLine[] = [
      taskLine(1, 'Fix the tests.'),
      output(1, { type: 'text', text: 'Looking' }),
      output(1, { type: 'text', text: ' now.' }),
      output(1, { type: 'tool_call', id: 't1', name: 'shell', input: { command: 'npm test' } }),
      // A Gemini CLI line: read through the CLI's translator.
      {
        executionId: 1,
        stream: 'output',
        line: JSON.stringify({ type: 'message', role: 'assistant', content: 'Fixed.' }),
        at,
      },
      { executionId: 1, stream: 'output', line: 'plain log line', at },
      // The second execution's task line repeats the run's prompt; only its follow-up was said then.
      taskLine(2, 'Fix the tests.', ['And the lint?']),
      output(2, { type: 'failed', message: 'model unavailable' }),
    ];
    const prompt = cliPrompt(task({ executionId: 3, history, followups: ['Try again.'] }), AGENT_CLIS.gemini.translate);
    assert.equal(
      prompt,
      [
        '<earlier_conversation>',
        'This continues an earlier conversation. Its work was done in another workspace: what it changed is here only if it was committed and pushed.',
        'User: Fix the tests.',
        'Agent: Looking now.',
        'Agent: Fixed.',
        'User: And the lint?',
        'Agent: (stopped with an error: model unavailable)',
        '</earlier_conversation>',
        '',
        'Try again.',
      ].join('\n'),
    );
  });

  test('a new run joining a conversation says its own prompt after the recap', () => {
    const prompt = cliPrompt(task({ history: [taskLine(1, 'Earlier run.')], prompt: 'This run.' }), none);
    assert.match(prompt, /User: Earlier run\.\n<\/earlier_conversation>\n\nThis run\.$/);
  });

  test('the recap is bounded: long messages are cut, and the oldest message and the latest ones kept', () => {
    const long = 'x'.repeat(10_000);
    const history: TranscriptLine[] = [taskLine(1, 'The original task.')];
    for (let index = 0; index < 50; index++) {
      history.push(
        taskLine(index + 2, 'ignored', [`Follow-up ${index}`]),
        output(index + 2, { type: 'text', text: `${index}:${long}` }),
      );
    }
    const prompt = cliPrompt(task({ executionId: 60, history, followups: ['Last.'] }), none);
    assert.ok(prompt.length < 30_000, String(prompt.length));
    assert.match(prompt, /User: The original task\.\n\(\d+ messages left out\)\n/);
    assert.match(prompt, /Follow-up 49\nAgent: 49:x+…\n<\/earlier_conversation>\n\nLast\.$/);
    assert.doesNotMatch(prompt, /Follow-up 0\n/);
  });
});

describe('locateBinary', () => {
  const bin = path.join(root, 'bin');
  fs.mkdirSync(bin);
  fs.writeFileSync(path.join(bin, 'tool'), '#!/bin/sh\n', { mode: 0o755 });
  fs.writeFileSync(path.join(bin, 'plain'), 'not executable', { mode: 0o644 });

  test('finds an executable on PATH, or at the path given', () => {
    assert.equal(locateBinary('tool', `/nonexistent:${bin}`), path.join(bin, 'tool'));
    assert.equal(locateBinary(path.join(bin, 'tool'), undefined), path.join(bin, 'tool'));
  });

  test('finds nothing that is missing, not executable, a directory, or only on a relative PATH entry', () => {
    assert.equal(locateBinary('missing', bin), undefined);
    assert.equal(locateBinary('plain', bin), undefined);
    assert.equal(locateBinary('bin', root), undefined);
    assert.equal(locateBinary('tool', path.relative(process.cwd(), bin)), undefined);
    assert.equal(locateBinary('tool', undefined), undefined);
  });
});
