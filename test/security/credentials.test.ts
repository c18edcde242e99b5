/**
 * Issue 21, item 8: credentials a run does not need stay out of its sandbox. The coding-agent CLIs call their
 * model through the server's model proxy with the task token as their key, so the agent's own commands find no
 * provider key in their environment, yet the real key reaches the model server. A registered HTTP MCP server
 * shared by another team is reached through the MCP proxy, so its secret header is in no file of the workspace.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { type CliName, missingClis, writeCliOperatorFile } from '../harnesses/scripted-runs.js';
import { conversationBlocks, waitForState } from '../support/engine.js';
import { DocsMcpServer } from '../support/mcp/http-server.js';
import {
  AnthropicServer,
  GeminiServer,
  OpenAIResponsesServer,
  type ScriptedModelServer,
} from '../support/model-servers/index.js';
import { createRun } from '../support/runs.js';
import { startTestServer, type TestServer } from '../support/server.js';

const TIMEOUT_MS = 180_000;
const skip = missingClis();

const KEYS = {
  claude: 'sk-ant-team-secret-0451',
  codex: 'sk-openai-operator-0452',
  gemini: 'AIza-google-operator-0453',
} as const;
const SHARED_HEADER = 'shared-header-value-0454';
const servers = {
  claude: new AnthropicServer(),
  codex: new OpenAIResponsesServer(),
  gemini: new GeminiServer(),
} satisfies Record<CliName, ScriptedModelServer>;
const shellTool: Record<CliName, { name: string; input: (command: string) => Record<string, unknown> }> = {
  claude: { name: 'Bash', input: (command) => ({ command, description: 'Look around' }) },
  codex: { name: 'exec_command', input: (command) => ({ cmd: command }) },
  gemini: { name: 'run_shell_command', input: (command) => ({ command, description: 'Look around' }) },
};
const keyHeader: Record<CliName, (headers: Record<string, unknown>) => unknown> = {
  claude: (headers) => headers['x-api-key'],
  codex: (headers) => headers.authorization,
  gemini: (headers) => headers['x-goog-api-key'],
};
const expectedKeyHeader: Record<CliName, string> = {
  claude: KEYS.claude,
  codex: `Bearer ${KEYS.codex}`,
  gemini: KEYS.gemini,
};

let hangar: TestServer;
let configDirectory: string;

before(async () => {
  if (skip) return;
  await Promise.all(Object.values(servers).map((server) => server.listen()));
  const { directory, file } = writeCliOperatorFile(servers, 'CREDENTIALS');
  configDirectory = directory;
  hangar = await startTestServer({
    HANGAR_CONFIG: file,
    CREDENTIALS_OPENAI_KEY: KEYS.codex,
    CREDENTIALS_GOOGLE_KEY: KEYS.gemini,
    HANGAR_MCP_ALLOWED_HOSTS: '127.0.0.1',
  });
  assert.equal(
    (await hangar.request('POST', '/api/v1/secrets', { body: { name: 'CLAUDE_KEY', value: KEYS.claude } })).status,
    201,
  );
});

after(async () => {
  await hangar?.stop();
  await Promise.all(Object.values(servers).map((server) => server.close()));
  if (configDirectory) fs.rmSync(configDirectory, { recursive: true, force: true });
});

function config(name: CliName): Record<string, unknown> {
  const config: Record<string, unknown> = { harness: { type: name, model_id: `${name}-test` } };
  // Claude's key is a team secret named in harness_auth_secrets; the others are the operator's.
  if (name === 'claude') config.harness_auth_secrets = { claude_auth_secret_name: 'CLAUDE_KEY' };
  return config;
}

describe('credentials and the CLI sandboxes', { skip, timeout: 4 * TIMEOUT_MS }, () => {
  for (const name of ['claude', 'codex', 'gemini'] as const) {
    test(`${name}: the agent's commands see no provider key, and the model gets the real one through the proxy`, {
      timeout: TIMEOUT_MS,
    }, async () => {
      const server = servers[name];
      const before = server.requests.length;
      const tool = shellTool[name];
      server.script(
        {
          text: 'Reading the environment.',
          toolCalls: [
            { name: tool.name, input: tool.input("env; tr '\\0' '\\n' < /proc/self/environ; echo END-OF-ENV") },
          ],
        },
        { text: 'Done looking.' },
      );
      const runId = await createRun(hangar, { prompt: 'Print your environment', config: config(name) });
      const run = await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR');
      assert.equal(run.state, 'SUCCEEDED', JSON.stringify(run.status_message));

      const calls = server.requests.slice(before).filter((request) => request.method === 'POST');
      assert.ok(calls.length >= 2);
      for (const call of calls)
        assert.equal(
          keyHeader[name](call.headers),
          expectedKeyHeader[name],
          'the real key arrives at the model server',
        );
      // The command ran and its output went back to the model: the environment is there, the key is not.
      const blocks = await conversationBlocks(hangar, runId);
      const output = JSON.stringify(
        blocks.filter((block) => block.type === 'action_result').map((block) => block.output),
      );
      assert.match(output, /END-OF-ENV/);
      assert.match(output, /HANGAR_TASK_TOKEN/);
      assert.ok(!output.includes(KEYS[name]), `the agent's command read the key: ${output.slice(0, 2000)}`);
      assert.ok(
        !JSON.stringify(calls.map((call) => call.body)).includes(KEYS[name]),
        'no key in what the model was sent',
      );

      // What the agent did find, the task token, opens the proxy only while its execution runs.
      const token = /HANGAR_TASK_TOKEN=(hgt_[A-Za-z0-9._-]+)/.exec(output)?.[1];
      assert.ok(token, 'the task token was in the environment');
      const seen = server.requests.length;
      const provider = {
        claude: 'anthropic/v1/messages',
        codex: 'openai/responses',
        gemini: 'google/v1beta/models/gemini-test-model:generateContent',
      }[name];
      for (const credential of [token, `${token.slice(0, -2)}xx`]) {
        const replay = await fetch(`${hangar.apiUrl}/harness-support/model-proxy/${provider}`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'x-api-key': credential,
            authorization: `Bearer ${credential}`,
            'x-goog-api-key': credential,
          },
          body: '{}',
        });
        assert.equal(replay.status, 401);
      }
      assert.equal(server.requests.length, seen, 'nothing reached the model server after the run');
    });
  }

  test("a shared MCP server's secret header is in no file of the other team's workspace, and still reaches the server", {
    timeout: TIMEOUT_MS,
  }, async () => {
    const docs = await new DocsMcpServer().listen();
    try {
      const owner = await hangar.createTeamWithUser();
      const secret = await hangar.request('POST', '/api/v1/secrets', {
        body: { name: 'DOCS_TOKEN', value: SHARED_HEADER },
        apiKey: owner.apiKey,
      });
      assert.equal(secret.status, 201);
      const registered = await hangar.request('POST', '/api/v1/mcp-servers', {
        body: { name: 'docs', url: docs.url, headers: { Authorization: { secret: 'DOCS_TOKEN' } } },
        apiKey: owner.apiKey,
      });
      assert.equal(registered.status, 201, JSON.stringify(registered.body));
      assert.equal(
        (
          await hangar.request('POST', `/api/v1/mcp-servers/${registered.body.uid}/shares`, {
            body: { team_uid: hangar.teamUid },
            apiKey: owner.apiKey,
          })
        ).status,
        200,
      );

      for (const name of ['claude', 'codex', 'gemini'] as const) {
        const server = servers[name];
        const tool = shellTool[name];
        // The value is assembled by the shell, so the command line (kept in the CLI's session file) does not hold it.
        const search = `P=shared-header; grep -rIl "$P-value-0454" "$HOME" "$PWD" 2>/dev/null; echo "searched HOME and workspace: $?"`;
        server.script({ toolCalls: [{ name: tool.name, input: tool.input(search) }] }, { text: 'Searched.' });
        const headersBefore = docs.headers.length;
        const runId = await createRun(hangar, {
          prompt: 'Search the workspace',
          config: { ...config(name), mcp_servers: { docs: { warp_id: registered.body.uid } } },
        });
        const run = await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR');
        assert.equal(run.state, 'SUCCEEDED', `${name}: ${JSON.stringify(run.status_message)}`);
        const blocks = await conversationBlocks(hangar, runId);
        const output = JSON.stringify(
          blocks.filter((block) => block.type === 'action_result').map((block) => block.output),
        );
        // grep exits 1 when no file holds the value.
        assert.match(
          output,
          /searched HOME and workspace: 1/,
          `${name}: a workspace file holds the shared secret: ${output}`,
        );
        // The CLI connected to the server through the proxy, which added the owner's header.
        const seen = docs.headers.slice(headersBefore);
        assert.ok(seen.length > 0, `${name} did not connect to the MCP server`);
        assert.ok(
          seen.every((headers) => headers.authorization === SHARED_HEADER),
          JSON.stringify(seen),
        );
      }
    } finally {
      await docs.close();
    }
  });
});
