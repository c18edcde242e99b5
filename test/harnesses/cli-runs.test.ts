/**
 * The coding-agent CLIs through the whole service: a run created over HTTP with `config.harness.type` claude,
 * codex or gemini is executed by the engine, the real CLI (from scripts/install-agent-clis.sh, named by the
 * operator file's builtin_harnesses paths) works in a clone of the environment's repository against its
 * provider's scripted model server, and the API gives back the normalized conversation, usage and the catalogue's
 * cost. Claude takes its key from the team secret named in harness_auth_secrets; the others from the operator.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import YAML from 'yaml';
import { conversationBlocks, waitForSignalledRun, waitForState } from '../support/engine.js';
import { GitFixtures } from '../support/git.js';
import {
  AnthropicServer,
  GeminiServer,
  OpenAIResponsesServer,
  type ScriptedModelServer,
} from '../support/model-servers/index.js';
import { addEnvironmentWithRepos, createRun } from '../support/runs.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { type CliName, missingClis, writeCliOperatorFile } from './scripted-runs.js';

const TIMEOUT_MS = 180_000;
const skip = missingClis();

const servers = {
  claude: new AnthropicServer(),
  codex: new OpenAIResponsesServer(),
  gemini: new GeminiServer(),
} satisfies Record<CliName, ScriptedModelServer>;
const shellTool: Record<CliName, { name: string; input: (command: string) => Record<string, unknown> }> = {
  claude: { name: 'Bash', input: (command) => ({ command, description: 'Change the greeting' }) },
  codex: { name: 'exec_command', input: (command) => ({ cmd: command }) },
  gemini: { name: 'run_shell_command', input: (command) => ({ command, description: 'Change the greeting' }) },
};
const git = new GitFixtures();
let hangar: TestServer;
let environmentId: string;
let configDirectory: string;

before(async () => {
  if (skip) return;
  await Promise.all(Object.values(servers).map((server) => server.listen()));
  git.createRepo('acme', 'app', { 'hello.txt': 'hello\n' });
  const prices = { claude: { input: 3, output: 15 }, codex: { input: 2, output: 8 }, gemini: { input: 1, output: 4 } };
  const { directory, file } = writeCliOperatorFile(servers, 'CLI_RUNS', prices);
  configDirectory = directory;
  hangar = await startTestServer({
    HANGAR_CONFIG: file,
    HANGAR_GIT_BASE_URL: git.baseUrl,
    CLI_RUNS_OPENAI_KEY: 'openai-operator-key',
    CLI_RUNS_GOOGLE_KEY: 'google-operator-key',
  });
  environmentId = await addEnvironmentWithRepos(hangar, ['acme/app']);
  assert.equal(
    (await hangar.request('POST', '/api/v1/secrets', { body: { name: 'CLAUDE_KEY', value: 'team-claude-key' } }))
      .status,
    201,
  );
});

after(async () => {
  await hangar?.stop();
  await Promise.all(Object.values(servers).map((server) => server.close()));
  git.remove();
  if (configDirectory) fs.rmSync(configDirectory, { recursive: true, force: true });
});

describe('runs of the coding-agent CLIs', { skip, timeout: 4 * TIMEOUT_MS }, () => {
  const models: Record<
    CliName,
    {
      id: string;
      price: { input: number; output: number };
      key: (headers: Record<string, unknown>) => unknown;
      expected: string;
    }
  > = {
    claude: {
      id: 'claude-test',
      price: { input: 3, output: 15 },
      key: (headers) => headers['x-api-key'],
      expected: 'team-claude-key',
    },
    codex: {
      id: 'codex-test',
      price: { input: 2, output: 8 },
      key: (headers) => headers.authorization,
      expected: 'Bearer openai-operator-key',
    },
    gemini: {
      id: 'gemini-test',
      price: { input: 1, output: 4 },
      key: (headers) => headers['x-goog-api-key'],
      expected: 'google-operator-key',
    },
  };

  for (const name of ['claude', 'codex', 'gemini'] as const) {
    test(`${name}: changes the clone with its shell tool and answers; conversation, usage and cost come back`, {
      timeout: TIMEOUT_MS,
    }, async () => {
      const server = servers[name];
      const tool = shellTool[name];
      server.script(
        {
          text: 'Changing the greeting.',
          toolCalls: [
            { name: tool.name, input: tool.input("sed -i 's/hello/hello world/' app/hello.txt && cat app/hello.txt") },
          ],
          usage: { input: 1000, output: 100 },
        },
        { text: 'The greeting now says hello world.', usage: { input: 2000, output: 50 } },
      );
      const config: Record<string, unknown> = {
        environment_id: environmentId,
        harness: { type: name, model_id: models[name].id },
      };
      if (name === 'claude') config.harness_auth_secrets = { claude_auth_secret_name: 'CLAUDE_KEY' };
      const runId = await createRun(hangar, { prompt: 'Make the greeting say hello world', config });
      const run = await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR');
      assert.equal(run.state, 'SUCCEEDED', JSON.stringify(run.status_message));

      const calls = server.requests.filter((request) => request.method === 'POST');
      assert.ok(calls.length >= 2);
      for (const call of calls) assert.equal(models[name].key(call.headers), models[name].expected);

      const blocks = await conversationBlocks(hangar, runId);
      assert.deepEqual(blocks[0], { role: 'user', type: 'text', text: 'Make the greeting say hello world' });
      const action = blocks.find((block) => block.type === 'action');
      assert.equal(action.category, 'command');
      const result = blocks.find((block) => block.type === 'action_result' && block.action_id === action.id);
      assert.match(JSON.stringify(result.output), /hello world/);
      const said = blocks
        .filter((block) => block.role === 'assistant' && block.type === 'text')
        .map((block) => block.text)
        .join('');
      assert.match(said, /The greeting now says hello world\./);

      // The CLI's token counts; the cost at the catalogue's prices, whatever the CLI thought it cost.
      assert.equal(run.request_usage.total_tokens, 3150);
      const { input, output } = models[name].price;
      assert.ok(
        Math.abs(run.request_usage.inference_cost - (3000 * input + 150 * output) / 1_000_000) < 1e-9,
        JSON.stringify(run.request_usage),
      );
    });
  }

  for (const name of ['claude', 'codex', 'gemini'] as const) {
    test(`${name}: a follow-up continues the run in the CLI's own session`, { timeout: TIMEOUT_MS }, async () => {
      const server = servers[name];
      server.script({ text: 'Noted: the codename is KESTREL.' });
      const config: Record<string, unknown> = { harness: { type: name, model_id: models[name].id } };
      if (name === 'claude') config.harness_auth_secrets = { claude_auth_secret_name: 'CLAUDE_KEY' };
      const runId = await createRun(hangar, { prompt: 'Remember the codename KESTREL', config });
      assert.equal((await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR')).state, 'SUCCEEDED');
      const before = server.requests.filter((request) => request.method === 'POST').length;
      server.script({ text: 'The codename is KESTREL.' });
      assert.equal(
        (await hangar.request('POST', `/agent/runs/${runId}/followups`, { body: { message: 'What is the codename?' } }))
          .status,
        200,
      );
      await waitForSignalledRun(
        hangar,
        runId,
        (run) => run.state === 'SUCCEEDED' && run.status_message?.message !== 'Noted: the codename is KESTREL.',
        TIMEOUT_MS,
      );
      const resumed = JSON.stringify(server.requests.filter((request) => request.method === 'POST')[before]!.body);
      for (const said of ['Remember the codename KESTREL', 'Noted: the codename is KESTREL.', 'What is the codename?'])
        assert.ok(resumed.includes(said), said);
      assert.ok(!resumed.includes('earlier_conversation'), 'the CLI resumed its session rather than reading a recap');
      // The kept session is in the raw transcript but not in the conversation.
      const users = (await conversationBlocks(hangar, runId))
        .filter((block) => block.role === 'user')
        .map((block) => block.text);
      assert.deepEqual(users, ['Remember the codename KESTREL', 'What is the codename?']);
    });
  }

  test('a CLI the server cannot find fails the run, naming the binary and its package', async () => {
    const file = path.join(configDirectory, 'hangar.yaml');
    const settings = YAML.parse(fs.readFileSync(file, 'utf8'));
    settings.builtin_harnesses.codex.path = '/nonexistent/codex';
    const other = path.join(configDirectory, 'missing-cli.yaml');
    fs.writeFileSync(other, YAML.stringify(settings));
    const server = await startTestServer({ HANGAR_CONFIG: other, CLI_RUNS_OPENAI_KEY: 'k' });
    try {
      const runId = await createRun(server, { prompt: 'x', config: { harness: { type: 'codex' } } });
      const run = await waitForState(server, runId, 'FAILED', 'SUCCEEDED', 'ERROR');
      assert.equal(run.state, 'FAILED');
      assert.equal(run.status_message.error_code, 'integration_not_configured');
      assert.match(
        run.status_message.message,
        /codex executable, which is not at \/nonexistent\/codex: install the npm package @openai\/codex/,
      );
    } finally {
      await server.stop();
    }
  });
});
