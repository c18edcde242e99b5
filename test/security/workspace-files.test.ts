/**
 * A run's code is hostile and controls its workspace; the server (often root) reads and writes in it. These runs
 * plant links and race the server with renameat2(RENAME_EXCHANGE) under bwrap, as a member of a team could, and
 * check that nothing outside the workspace is read into the run or written on the host (issue 21, items 1-4).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import YAML from 'yaml';
import { conversationBlocks, waitForState } from '../support/engine.js';
import { AnthropicServer } from '../support/model-servers/index.js';
import { createRun } from '../support/runs.js';
import { startTestServer, type TestServer } from '../support/server.js';

const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));
const EXCHANGE = fixture('exchange.py');
const FAKE_CLI = fixture('fake-cli.sh');
const HOST_MARKER = 'HOST-FILE-MUST-NOT-LEAK';
const RUN_TIMEOUT_MS = 120_000;

const anthropic = new AnthropicServer();
let hangar: TestServer;
/** Host paths the test owns: what a run's links point at. */
let host: string;
let configDirectory: string;

before(async () => {
  await anthropic.listen();
  host = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-host-'));
  configDirectory = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-security-'));
  const file = path.join(configDirectory, 'hangar.yaml');
  fs.writeFileSync(
    file,
    YAML.stringify({
      harnesses: {
        script: {
          command: [process.execPath, fileURLToPath(new URL('../support/script-harness.mjs', import.meta.url))],
        },
        'racing-artifacts': {
          command: ['sh', fixture('racing-artifacts.sh'), path.join(host, 'artifacts'), EXCHANGE],
          timeout_minutes: 2,
        },
      },
      builtin_harnesses: {
        claude: { path: FAKE_CLI, timeout_minutes: 2 },
        gemini: { path: FAKE_CLI, timeout_minutes: 2 },
        oz: { max_steps: 4 },
      },
      models: [
        {
          id: 'claude-test',
          provider: 'ANTHROPIC',
          model: 'claude-test',
          base_url: anthropic.baseURL,
          api_key_env: 'SECURITY_TEST_KEY',
          cost: { input: 0, output: 0 },
        },
        {
          id: 'gemini-test',
          provider: 'GOOGLE',
          model: 'gemini-test',
          base_url: 'http://127.0.0.1:9/v1beta',
          api_key_env: 'SECURITY_TEST_KEY',
          cost: { input: 0, output: 0 },
        },
      ],
    }),
  );
  hangar = await startTestServer({ HANGAR_CONFIG: file, HANGAR_SANDBOX: 'bwrap', SECURITY_TEST_KEY: 'sk-test' });
});

after(async () => {
  await hangar?.stop();
  await anthropic.close();
  fs.rmSync(host, { recursive: true, force: true });
  fs.rmSync(configDirectory, { recursive: true, force: true });
});

/** A host directory holding `secret` with the marker. */
function hostDirectory(name: string): string {
  const directory = path.join(host, name);
  fs.mkdirSync(directory);
  fs.writeFileSync(path.join(directory, 'secret'), `${HOST_MARKER}\n`);
  return directory;
}

async function runToEnd(body: Record<string, unknown>): Promise<any> {
  const runId = await createRun(hangar, body);
  return waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR');
}

async function rawTranscript(runId: string): Promise<string[]> {
  const link = await fetch(`${hangar.apiUrl}/agent/runs/${runId}/transcript`, {
    headers: { authorization: `Bearer ${hangar.apiKey}` },
    redirect: 'manual',
  });
  if (link.status === 404) return [];
  assert.equal(link.status, 302);
  return (await (await fetch(link.headers.get('location')!)).text()).split('\n');
}

async function environmentWithSetup(commands: string[]): Promise<string> {
  const response = await hangar.request('POST', '/api/v1/environments', {
    body: { name: `setup ${Math.random()}`, setup_commands: commands },
  });
  assert.equal(response.status, 201, JSON.stringify(response.body));
  return response.body.uid as string;
}

/** Every file under `directory`, with its content. */
function filesUnder(directory: string): Record<string, string> {
  if (!fs.existsSync(directory)) return {};
  const entries = fs.readdirSync(directory, { recursive: true, withFileTypes: true });
  return Object.fromEntries(
    entries
      .filter((entry) => entry.isFile())
      .map((entry) => [
        path.join(entry.parentPath, entry.name),
        fs.readFileSync(path.join(entry.parentPath, entry.name), 'utf8'),
      ]),
  );
}

describe('the server never follows a run into the host', { timeout: 4 * RUN_TIMEOUT_MS }, () => {
  test('item 1: a CLI session file replaced by a link to the secret key does not bring the key into the transcript', {
    timeout: RUN_TIMEOUT_MS,
  }, async () => {
    const secretKey = path.join(hangar.dataDir, 'secret-key');
    const secret = fs.readFileSync(secretKey, 'utf8').trim();
    assert.ok(secret.length > 20);
    const run = await runToEnd({
      prompt: `LINK_TARGET=${secretKey} `,
      config: { harness: { type: 'claude', model_id: 'claude-test' } },
    });
    assert.equal(run.state, 'SUCCEEDED', JSON.stringify(run.status_message));
    const lines = await rawTranscript(run.run_id);
    assert.ok(
      lines.some((line) => line.includes('"subtype":"success"')),
      'the CLI ran',
    );
    for (const line of lines) {
      assert.ok(!line.includes(secret));
      if (!line.startsWith('{"type":"hangar_cli_session"')) continue;
      const kept = gunzipSync(Buffer.from(JSON.parse(line).content, 'base64')).toString('utf8');
      assert.ok(!kept.includes(secret), 'the secret key was read through the link into the kept session');
    }
  });

  test('item 2: a FILE artifact whose directory is swapped with a link in a loop never stores a host file', {
    timeout: RUN_TIMEOUT_MS,
  }, async () => {
    hostDirectory('artifacts');
    const run = await runToEnd({ prompt: 'race', config: { harness: { type: 'racing-artifacts' } } });
    assert.equal(run.state, 'SUCCEEDED', JSON.stringify(run.status_message));
    const stored = filesUnder(path.join(hangar.dataDir, 'blobs'));
    assert.ok(Object.keys(stored).length > 0, 'the race was on: some artifacts were stored (from the real directory)');
    for (const [file, content] of Object.entries(stored))
      assert.ok(!content.includes(HOST_MARKER), `a host file was stored as an artifact: ${file}`);
  });

  test("item 3: oz's read_file and write_file raced from an inline stdio MCP server never reach the host", {
    timeout: RUN_TIMEOUT_MS,
  }, async () => {
    const directory = hostDirectory('oz');
    const reads = Array.from({ length: 60 }, () => ({ name: 'read_file', input: { path: 'd/secret' } }));
    const writes = Array.from({ length: 60 }, (_, index) => ({
      name: 'write_file',
      input: { path: `d/planted-${index}`, content: 'planted by the run' },
    }));
    anthropic.script({ toolCalls: reads }, { toolCalls: writes }, { text: 'Done racing.' });
    const run = await runToEnd({
      prompt: 'Read and write d/secret',
      config: {
        harness: { type: 'oz', model_id: 'claude-test' },
        mcp_servers: {
          racer: {
            command: process.execPath,
            args: [fixture('racing-mcp-server.mjs')],
            env: { HOST_DIR: directory, EXCHANGE },
          },
        },
      },
    });
    assert.equal(run.state, 'SUCCEEDED', JSON.stringify(run.status_message));
    const results = (await conversationBlocks(hangar, run.run_id)).filter((block) => block.type === 'action_result');
    assert.equal(results.length, 120, 'every raced call ran');
    // Each read got the workspace's file or was refused (the directory was the link then); the writes the same.
    for (const block of results.slice(0, 60))
      assert.match(JSON.stringify(block.output), /harmless|HOST-FILE|^"d\/secret: /);
    const leaks = [
      ...(results.some((block) => JSON.stringify(block.output).includes(HOST_MARKER))
        ? ['read_file returned a host file']
        : []),
      ...fs
        .readdirSync(directory)
        .filter((name) => name !== 'secret')
        .map((name) => `write_file created ${name} on the host`),
    ];
    assert.deepEqual(leaks.slice(0, 2), []);
    assert.equal(fs.readFileSync(path.join(directory, 'secret'), 'utf8'), `${HOST_MARKER}\n`);
  });

  test('item 4: setup commands that turn HOME, the MCP config or the CLI settings into links do not make the server write on the host', {
    timeout: RUN_TIMEOUT_MS,
  }, async () => {
    const homeTarget = path.join(host, 'home');
    const settingsTarget = path.join(host, 'gemini');
    fs.mkdirSync(homeTarget);
    fs.mkdirSync(settingsTarget);
    const configTarget = path.join(host, 'cron-file');
    fs.writeFileSync(configTarget, 'untouched\n');
    const inlineMcp = { mcp_servers: { tools: { command: 'true' } } };
    const attempts = [
      {
        setup: `rm -rf .home && ln -s ${homeTarget} .home`,
        config: { harness: { type: 'claude', model_id: 'claude-test' }, ...inlineMcp },
      },
      {
        setup: `mkdir -p .home && ln -s ${configTarget} .home/.hangar-mcp.json`,
        config: { harness: { type: 'claude', model_id: 'claude-test' }, ...inlineMcp },
      },
      {
        setup: `mkdir -p .home && ln -s ${settingsTarget} .home/.gemini`,
        config: { harness: { type: 'gemini', model_id: 'gemini-test' } },
      },
    ];
    for (const attempt of attempts) {
      const environmentId = await environmentWithSetup([attempt.setup]);
      const run = await runToEnd({ prompt: 'x', config: { environment_id: environmentId, ...attempt.config } });
      assert.notEqual(run.state, 'ERROR', JSON.stringify(run.status_message));
      if (run.state === 'FAILED') assert.match(run.status_message.message, /symbolic link/);
    }
    const written = [
      ...fs.readdirSync(homeTarget).map((name) => `${name} in the host directory HOME was linked to`),
      ...(fs.readFileSync(configTarget, 'utf8') === 'untouched\n' ? [] : ['the MCP config through a link']),
      ...fs.readdirSync(settingsTarget).map((name) => `${name} in the host directory .gemini was linked to`),
    ];
    assert.deepEqual(written, [], 'the server wrote on the host');
  });

  test('item 16a: a refused FILE artifact says the same whether the host path it names exists or not', {
    timeout: RUN_TIMEOUT_MS,
  }, async () => {
    const existing = path.join(host, 'exists');
    fs.writeFileSync(existing, 'x');
    const paths = [
      existing,
      path.join(host, 'does-not-exist'),
      `../../../../../..${existing}`,
      `../../../../../..${host}/does-not-exist`,
    ];
    const steps = paths.map((file) => ({ emit: { type: 'artifact', artifact_type: 'FILE', data: { path: file } } }));
    const run = await runToEnd({ prompt: JSON.stringify(steps), config: { harness: { type: 'script' } } });
    assert.equal(run.state, 'SUCCEEDED', JSON.stringify(run.status_message));
    const timeline = await hangar.request('GET', `/agent/runs/${run.run_id}/timeline`);
    // The reason names the path it was given; what follows must not depend on the host.
    const reasons = timeline.body.events
      .filter((event: any) => event.event_type === 'artifact_refused')
      .map((event: any, index: number) => event.payload.reason.replace(paths[index], '<path>'));
    assert.equal(reasons.length, 4);
    assert.equal(reasons[0], reasons[1], 'an absolute host path: the reason tells whether it exists');
    assert.equal(reasons[2], reasons[3], 'a path climbing out: the reason tells whether it exists');
  });
});
