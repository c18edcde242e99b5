import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { conversationBlocks, waitForState } from '../support/engine.js';
import { AnthropicServer } from '../support/model-servers/index.js';
import { startTestServer, type TestServer } from '../support/server.js';

// The attack of issue 21 item 10, for real: a team admin registers an MCP server that gets a team secret in its
// environment; a plain member runs it with a tool call that returns its environment, and reads the secret in the
// run's conversation.
const TICKETS_SERVER = fileURLToPath(new URL('../support/mcp/tickets-server.mjs', import.meta.url));
const SECRET_VALUE = 'admin-only-value-7f3a';
const anthropic = new AnthropicServer();
let hangar: TestServer;
let configDirectory: string;

before(async () => {
  await anthropic.listen();
  configDirectory = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-exfil-'));
  const file = path.join(configDirectory, 'hangar.yaml');
  fs.writeFileSync(
    file,
    YAML.stringify({
      default_model: 'sonnet-test',
      builtin_harnesses: { oz: { max_steps: 4 } },
      models: [
        {
          id: 'sonnet-test',
          provider: 'ANTHROPIC',
          model: 'claude-sonnet-4-20250514',
          base_url: anthropic.baseURL,
          api_key_env: 'EXFIL_TEST_KEY',
          cost: { input: 3, output: 15 },
        },
      ],
    }),
  );
  hangar = await startTestServer({ HANGAR_CONFIG: file, EXFIL_TEST_KEY: 'sk-test', HANGAR_RUN_LEASE_SECONDS: '6' });
});
after(async () => {
  await hangar?.stop();
  await anthropic.close();
  fs.rmSync(configDirectory, { recursive: true, force: true });
});

test("a member's run cannot read an admin-only team secret through the team's MCP server", async () => {
  assert.equal(
    (await hangar.request('POST', '/api/v1/secrets', { body: { name: 'ADMIN_ONLY', value: SECRET_VALUE } })).status,
    201,
  );
  const server = await hangar.request('POST', '/api/v1/mcp-servers', {
    body: {
      name: 'tickets',
      command: process.execPath,
      args: [TICKETS_SERVER],
      env: { TICKETS_LABEL: { secret: 'ADMIN_ONLY' } },
    },
  });
  assert.equal(server.status, 201);
  const member = await hangar.addUser(hangar.teamUid, 'member');
  anthropic.script({ toolCalls: [{ name: 'tickets__lookup_ticket', input: { id: 'T-1' } }] }, { text: 'done' });
  const body = { prompt: 'look up T-1', config: { mcp_servers: { tickets: { warp_id: server.body.uid } } } };

  const attempt = await hangar.request('POST', '/api/v1/agent/runs', { body, apiKey: member.apiKey });
  if (attempt.status === 200) {
    await waitForState(hangar, attempt.body.run_id, 'SUCCEEDED', 'FAILED', 'ERROR');
    const leaked = JSON.stringify(await conversationBlocks(hangar, attempt.body.run_id)).includes(SECRET_VALUE);
    assert.fail(`the member's run was created${leaked ? ' and its conversation shows the admin-only secret' : ''}`);
  }
  assert.equal(attempt.status, 403, JSON.stringify(attempt.body));

  // The admin's own run gets the value: the mechanism works, only the member was kept from it. What the tool
  // returned is stored with the value replaced by the secret's name (redaction, docs/security.md).
  const own = await hangar.request('POST', '/api/v1/agent/runs', { body });
  assert.equal(own.status, 200);
  assert.equal((await waitForState(hangar, own.body.run_id, 'SUCCEEDED', 'FAILED', 'ERROR')).state, 'SUCCEEDED');
  const conversation = JSON.stringify(await conversationBlocks(hangar, own.body.run_id));
  assert.ok(conversation.includes('[REDACTED:ADMIN_ONLY]'), conversation);
  assert.ok(!conversation.includes(SECRET_VALUE));
});
