import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import {
  conversationBlocks,
  eventually,
  getRun,
  processesWith,
  timelineTypes,
  waitForState,
} from '../support/engine.js';
import { GitFixtures } from '../support/git.js';
import { DocsMcpServer } from '../support/mcp/http-server.js';
import { AnthropicServer, OpenAIChatServer } from '../support/model-servers/index.js';
import { addEnvironmentWithRepos, createRun } from '../support/runs.js';
import { startTestServer, type TestServer } from '../support/server.js';

// The built-in oz harness through the whole service: a run created over HTTP is executed by the engine, the agent
// calls a scripted model server through the real AI SDK provider, its tools act on a real git clone inside the
// sandbox, and the run's conversation, artifacts, usage and cost come back through the API.

const KEY_ENV = 'OZ_HARNESS_TEST_KEY';
const TICKETS_SERVER = fileURLToPath(new URL('../support/mcp/tickets-server.mjs', import.meta.url));
const git = new GitFixtures();
const anthropic = new AnthropicServer();
const local = new OpenAIChatServer();
let hangar: TestServer;
let environmentId: string;
let configDirectory: string;

before(async () => {
  await Promise.all([anthropic.listen(), local.listen()]);
  git.createRepo('acme', 'app', { 'src/greet.js': 'export const greet = () => "Hello";\n', 'README.md': '# app\n' });
  configDirectory = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-oz-'));
  const file = path.join(configDirectory, 'hangar.yaml');
  fs.writeFileSync(
    file,
    YAML.stringify({
      default_model: 'sonnet-test',
      // network: oz reaches the registered HTTP MCP server (on loopback, which the operator allows) from the server.
      builtin_harnesses: { oz: { max_steps: 6, network: true } },
      models: [
        {
          id: 'sonnet-test',
          provider: 'ANTHROPIC',
          model: 'claude-sonnet-4-20250514',
          base_url: anthropic.baseURL,
          api_key_env: KEY_ENV,
          cost: { input: 3, output: 15 },
        },
        {
          id: 'local-coder',
          provider: 'UNKNOWN',
          model: 'qwen-coder',
          base_url: local.baseURL,
          cost: { input: 0, output: 0 },
        },
        {
          id: 'gpt-keyless',
          provider: 'OPENAI',
          model: 'gpt-4.1',
          api_key_env: 'OZ_HARNESS_UNSET_KEY',
          cost: { input: 2, output: 8 },
        },
      ],
    }),
  );
  hangar = await startTestServer({
    HANGAR_CONFIG: file,
    HANGAR_GIT_BASE_URL: git.baseUrl,
    [KEY_ENV]: 'sk-test-oz',
    HANGAR_RUN_LEASE_SECONDS: '6',
    HANGAR_MCP_ALLOWED_HOSTS: '127.0.0.1',
  });
  environmentId = await addEnvironmentWithRepos(hangar, ['acme/app']);
});

after(async () => {
  await hangar?.stop();
  await Promise.all([anthropic.close(), local.close()]);
  git.remove();
  fs.rmSync(configDirectory, { recursive: true, force: true });
});

describe('the oz harness', () => {
  test('is the default: it edits the cloned repository with its tools, reports an artifact, and ends SUCCEEDED with usage and cost', async () => {
    const before = anthropic.requests.length;
    anthropic.script(
      {
        text: 'Looking for the greeting.',
        toolCalls: [{ name: 'search_files', input: { pattern: 'Hello' } }],
        usage: { input: 1000, output: 100 },
      },
      {
        toolCalls: [
          { name: 'edit_file', input: { path: 'app/src/greet.js', old_string: '"Hello"', new_string: '"Goodbye"' } },
        ],
        usage: { input: 1000, output: 100 },
      },
      {
        toolCalls: [{ name: 'run_command', input: { command: 'git diff --stat && cat src/greet.js', cwd: 'app' } }],
        usage: { input: 1000, output: 100 },
      },
      {
        toolCalls: [
          {
            name: 'report_artifact',
            input: { artifact_type: 'FILE', path: 'app/src/greet.js', description: 'the new greeting' },
          },
        ],
        usage: { input: 1000, output: 100 },
      },
      { text: 'The greeting now says Goodbye.', usage: { input: 1000, output: 100 } },
    );
    const runId = await createRun(hangar, {
      prompt: 'Make the greeting say Goodbye',
      config: { environment_id: environmentId },
    });
    const run = await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR');
    assert.equal(run.state, 'SUCCEEDED', JSON.stringify(run.status_message));
    assert.equal(run.status_message.message, 'The greeting now says Goodbye.');

    // The model was called with the operator's key, the catalogue's provider model name, and the task.
    const calls = anthropic.requests.slice(before);
    assert.equal(calls.length, 5);
    assert.equal(calls[0]!.headers['x-api-key'], 'sk-test-oz');
    assert.equal(calls[0]!.body.model, 'claude-sonnet-4-20250514');
    assert.match(JSON.stringify(calls[0]!.body.messages), /Make the greeting say Goodbye/);
    assert.match(JSON.stringify(calls[0]!.body.system), /At its root: .*app\//);

    // The shell command ran in the clone and saw the edit.
    const all = await conversationBlocks(hangar, runId);
    const command = all.find((block) => block.type === 'action_result' && block.name === 'run_command');
    assert.equal(command.category, 'command');
    assert.match(JSON.stringify(command.output), /1 file changed/);
    assert.match(JSON.stringify(command.output), /Goodbye/);
    assert.deepEqual(
      all.filter((block) => block.type === 'action').map((block) => block.name),
      ['search_files', 'edit_file', 'run_command', 'report_artifact'],
    );
    assert.equal(all[0].role, 'user');
    assert.equal(all[0].text, 'Make the greeting say Goodbye');

    // The file artifact holds the edited file.
    const file = run.artifacts.find((artifact: any) => artifact.artifact_type === 'FILE');
    assert.ok(file, JSON.stringify(run.artifacts));
    const artifact = await hangar.request('GET', `/agent/artifacts/${file.data.artifact_uid}`);
    const download = await fetch(artifact.body.data.download_url);
    assert.equal(await download.text(), 'export const greet = () => "Goodbye";\n');

    // Tokens from every step, priced at the catalogue's rates (3 and 15 USD per million).
    assert.equal(run.request_usage.total_tokens, 5500);
    assert.ok(
      Math.abs(run.request_usage.inference_cost - (5000 * 3 + 500 * 15) / 1_000_000) < 1e-9,
      JSON.stringify(run.request_usage),
    );
    // The run named no model; the one the harness fell back to is recorded, so the list filters by it.
    const listed = await hangar.request('GET', '/agent/runs?model_id=sonnet-test');
    assert.ok(listed.body.runs.some((item: any) => item.run_id === runId));
  });

  test('asks the user (BLOCKED), and a follow-up resumes the conversation with everything said before', async () => {
    const before = anthropic.requests.length;
    anthropic.script(
      {
        text: 'I need a decision.',
        toolCalls: [{ name: 'ask_user', input: { question: 'Should I also update the README?' } }],
      },
      { toolCalls: [{ name: 'write_file', input: { path: 'app/README.md', content: '# app\n\nSays Goodbye.\n' } }] },
      { text: 'Updated the README too.' },
    );
    const runId = await createRun(hangar, {
      prompt: 'Document the greeting',
      config: { environment_id: environmentId, harness: { type: 'oz' } },
    });
    const blocked = await waitForState(hangar, runId, 'BLOCKED', 'FAILED', 'ERROR', 'SUCCEEDED');
    assert.equal(blocked.state, 'BLOCKED', JSON.stringify(blocked.status_message));
    assert.equal(blocked.status_message.message, 'Should I also update the README?');

    const followup = await hangar.request('POST', `/agent/runs/${runId}/followups`, {
      body: { message: 'Yes, please update it.' },
    });
    assert.ok(followup.status < 300, JSON.stringify(followup.body));
    const done = await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR');
    assert.equal(done.state, 'SUCCEEDED', JSON.stringify(done.status_message));

    // The continuation's first request carries the earlier turns: the prompt, the question asked, then the answer.
    const resumed = JSON.stringify(anthropic.requests[before + 1]!.body.messages);
    assert.match(resumed, /Document the greeting/);
    assert.match(resumed, /Should I also update the README\?/);
    assert.match(resumed, /Yes, please update it\./);
    assert.ok(resumed.indexOf('Document the greeting') < resumed.indexOf('Yes, please update it.'));

    const all = await conversationBlocks(hangar, runId);
    const users = all.filter((block) => block.role === 'user').map((block) => block.text);
    assert.deepEqual(users, ['Document the greeting', 'Yes, please update it.']);
    assert.ok(all.some((block) => block.type === 'event' && block.name === 'ask_user'));
    assert.ok(all.some((block) => block.type === 'action' && block.name === 'write_file'));
  });

  test('a follow-up sent while it works reaches the model at its next step', async () => {
    const before = anthropic.requests.length;
    anthropic.script(
      { toolCalls: [{ name: 'run_command', input: { command: 'sleep 1.5' } }] },
      { text: 'Done, in French too.' },
    );
    const runId = await createRun(hangar, { prompt: 'Write a greeting' });
    await eventually('the command runs', () => processesWith('sleep 1.5').length > 0);
    const followup = await hangar.request('POST', `/agent/runs/${runId}/followups`, {
      body: { message: 'Also in French, please.' },
    });
    assert.ok(followup.status < 300, JSON.stringify(followup.body));
    const run = await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR');
    assert.equal(run.state, 'SUCCEEDED', JSON.stringify(run.status_message));
    // One execution: the message joined the running agent rather than waiting for a continuation.
    assert.equal(anthropic.requests.length - before, 2);
    assert.match(JSON.stringify(anthropic.requests[before + 1]!.body.messages), /Also in French, please\./);
    const users = (await conversationBlocks(hangar, runId))
      .filter((block) => block.role === 'user')
      .map((block) => block.text);
    assert.deepEqual(users, ['Write a greeting', 'Also in French, please.']);
  });

  test('runs on an OpenAI-compatible server named by model_id', async () => {
    local.script({ toolCalls: [{ name: 'list_files', input: {} }] }, { text: 'Listed.' });
    const runId = await createRun(hangar, {
      prompt: 'What is here?',
      config: { harness: { type: 'oz', model_id: 'local-coder' } },
    });
    const run = await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR');
    assert.equal(run.state, 'SUCCEEDED', JSON.stringify(run.status_message));
    assert.equal(local.requests.at(-1)!.body.model, 'qwen-coder');
  });

  test('stops at its step limit with a clear status message', async () => {
    const loop = { toolCalls: [{ name: 'list_files', input: {} }] };
    anthropic.script(loop, loop, loop, loop, loop, loop);
    const runId = await createRun(hangar, { prompt: 'Loop forever' });
    const run = await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR');
    assert.equal(run.state, 'FAILED');
    assert.equal(run.status_message.error_code, 'budget_exceeded');
    assert.match(run.status_message.message, /after 6 steps, its step limit/);
  });

  test('a model without credentials is refused at once, saying what to set; without a harness type, when the run starts', async () => {
    const refused = await hangar.request('POST', '/agent/runs', {
      body: { prompt: 'x', config: { harness: { type: 'oz', model_id: 'gpt-keyless' } } },
    });
    assert.equal(refused.status, 422);
    assert.equal(refused.body.error_code, 'integration_not_configured');
    assert.match(refused.body.detail, /OZ_HARNESS_UNSET_KEY/);

    // The harness is decided where the run executes; here the default (oz) cannot use the model.
    const keyless = await waitForState(
      hangar,
      await createRun(hangar, { prompt: 'x', config: { model_id: 'gpt-keyless' } }),
      'FAILED',
      'SUCCEEDED',
      'ERROR',
    );
    assert.equal(keyless.state, 'FAILED');
    assert.equal(keyless.status_message.error_code, 'integration_not_configured');
    assert.match(keyless.status_message.message, /OZ_HARNESS_UNSET_KEY/);
    const unknown = await waitForState(
      hangar,
      await createRun(hangar, { prompt: 'x', config: { model_id: 'no-such-model' } }),
      'FAILED',
      'SUCCEEDED',
      'ERROR',
    );
    assert.equal(unknown.status_message.error_code, 'invalid_request');
    assert.match(unknown.status_message.message, /no-such-model is not in this server's catalogue/);
  });

  test('a new run joining a conversation brings its own prompt after the earlier turns', async () => {
    anthropic.script({ text: 'First answer.' });
    const first = await createRun(hangar, { prompt: 'First question' });
    const done = await waitForState(hangar, first, 'SUCCEEDED', 'FAILED', 'ERROR');
    assert.equal(done.state, 'SUCCEEDED', JSON.stringify(done.status_message));
    const conversationId = (await getRun(hangar, first)).conversation_id;
    assert.ok(conversationId);
    const before = anthropic.requests.length;
    anthropic.script({ text: 'Second answer.' });
    const second = await createRun(hangar, { prompt: 'Second question', conversation_id: conversationId });
    assert.equal((await waitForState(hangar, second, 'SUCCEEDED', 'FAILED', 'ERROR')).state, 'SUCCEEDED');
    const sent = JSON.stringify(anthropic.requests[before]!.body.messages);
    assert.match(sent, /First question.*First answer.*Second question/);
  });

  test("uses its MCP servers' tools: an inline stdio server in the sandbox, and a registered HTTP server with a team secret", async () => {
    const docs = await new DocsMcpServer().listen();
    try {
      assert.equal(
        (await hangar.request('POST', '/api/v1/secrets', { body: { name: 'DOCS_TOKEN', value: 'docs-secret' } }))
          .status,
        201,
      );
      const registered = await hangar.request('POST', '/api/v1/mcp-servers', {
        body: { name: 'docs', url: docs.url, headers: { Authorization: { secret: 'DOCS_TOKEN' } } },
      });
      assert.equal(registered.status, 201, JSON.stringify(registered.body));
      const before = anthropic.requests.length;
      anthropic.script(
        {
          toolCalls: [
            { name: 'tickets__lookup_ticket', input: { id: 'T-7' } },
            { name: 'docs__search_docs', input: { query: 'login' } },
          ],
        },
        { text: 'The login page needs the cache.' },
      );
      const runId = await createRun(hangar, {
        prompt: 'Look into ticket T-7',
        config: {
          mcp_servers: {
            tickets: { command: process.execPath, args: [TICKETS_SERVER], env: { TICKETS_LABEL: 'from-config' } },
            docs: { warp_id: registered.body.uid },
          },
        },
      });
      const run = await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR');
      assert.equal(run.state, 'SUCCEEDED', JSON.stringify(run.status_message));

      // The model was offered both servers' tools under their server's name.
      const offered = JSON.stringify(anthropic.requests[before]!.body.tools);
      assert.match(offered, /tickets__lookup_ticket/);
      assert.match(offered, /docs__search_docs/);
      const results = (await conversationBlocks(hangar, runId)).filter((block) => block.type === 'action_result');
      const ticket = JSON.stringify(results.find((block) => block.name === 'tickets__lookup_ticket').output);
      assert.match(ticket, /Ticket T-7: the login page is slow/);
      assert.match(ticket, /label from-config/);
      assert.match(ticket, /cwd \/[^ ]*workspaces\//, 'the stdio server ran in the run workspace');
      assert.match(
        JSON.stringify(results.find((block) => block.name === 'docs__search_docs').output),
        /Docs about login: use the cache\./,
      );
      // The registered server got the team secret's value, which no API response shows.
      assert.ok(docs.headers.some((headers) => headers.authorization === 'docs-secret'));
      assert.equal(processesWith(TICKETS_SERVER).length, 0, 'the stdio server is stopped with the run');
    } finally {
      await docs.close();
    }
  });

  test('an MCP server that cannot start fails the run, naming it', async () => {
    const runId = await createRun(hangar, {
      prompt: 'x',
      config: { mcp_servers: { broken: { command: '/nonexistent/mcp-server' } } },
    });
    const run = await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR');
    assert.equal(run.state, 'FAILED');
    assert.match(run.status_message.message, /MCP server broken could not be reached/);
  });

  test('debugs a failed environment setup in the kept workspace, with the model of the run', async () => {
    const environment = await hangar.request('POST', '/api/v1/environments', {
      body: {
        name: 'broken setup',
        github_repos: [{ owner: 'acme', repo: 'app' }],
        setup_commands: ['echo partial > partial.txt; exit 7'],
        failure_session_retention_minutes: 5,
      },
    });
    assert.equal(environment.status, 201, JSON.stringify(environment.body));
    const runId = await createRun(hangar, { prompt: 'Build it', config: { environment_id: environment.body.uid } });
    assert.equal(
      (await waitForState(hangar, runId, 'FAILED', 'SUCCEEDED', 'ERROR')).status_message.error_code,
      'environment_setup_failed',
    );
    const before = anthropic.requests.length;
    anthropic.script(
      { toolCalls: [{ name: 'run_command', input: { command: 'cat partial.txt' } }] },
      { text: 'The setup wrote partial.txt, then exited 7.' },
    );
    assert.equal(
      (await hangar.request('POST', `/agent/runs/${runId}/followups`, { body: { message: 'Why did it fail?' } }))
        .status,
      200,
    );
    await eventually('the debug agent finished', async () =>
      (await timelineTypes(hangar, runId)).includes('debug_agent_finished'),
    );
    const sent = JSON.stringify(anthropic.requests[before]!.body.messages);
    assert.match(sent, /environment setup of this run failed/);
    assert.match(sent, /Why did it fail\?/);
    const results = (await conversationBlocks(hangar, runId)).filter((block) => block.type === 'action_result');
    assert.match(JSON.stringify(results.at(-1).output), /partial/);
    await hangar.server.engine!.debugSessions.close(runId);
  });

  test('a cancel stops the agent in the middle of a command', async () => {
    anthropic.script({ toolCalls: [{ name: 'run_command', input: { command: 'sleep 31.25' } }] });
    const runId = await createRun(hangar, { prompt: 'Wait a while' });
    await waitForState(hangar, runId, 'INPROGRESS');
    await eventually('the command runs', () => processesWith('sleep 31.25').length > 0);
    const cancel = await hangar.request('POST', `/agent/runs/${runId}/cancel`);
    assert.ok(cancel.status < 300, JSON.stringify(cancel.body));
    await waitForState(hangar, runId, 'CANCELLED');
    await eventually('the sandbox is gone', async () => (await getRun(hangar, runId)).is_sandbox_running === false);
    await eventually('the command was killed', () => processesWith('sleep 31.25').length === 0);
  });
});
