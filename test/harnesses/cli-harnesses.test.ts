/**
 * The coding-agent CLIs run for real through CliHarness, in a git workspace, against the scripted model server
 * of their provider: the file really changes, the stream translates to the expected events, and the CLI called
 * the model it was given with the key it was given. The CLIs come from scripts/install-agent-clis.sh; without
 * them these tests are skipped, except in CI, which installs them, where their absence fails.
 *
 * HANGAR_CAPTURE_FIXTURES=1 rewrites fixtures/*.jsonl (for translators.test.ts) from these runs, e.g. after
 * upgrading a CLI.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { AGENT_CLIS, CliHarness } from '../../src/execution/harnesses/cli/index.js';
import {
  type HarnessSink,
  HarnessStartError,
  type HarnessTask,
  type TranscriptLine,
} from '../../src/execution/harnesses/harness.js';
import { resolveSandboxMode, type SandboxMode } from '../../src/execution/sandbox/index.js';
import { type HarnessEvent, taskMessage } from '../../src/runs/index.js';
import { DocsMcpServer } from '../support/mcp/http-server.js';
import type { ScriptedModelServer, ScriptedTurn } from '../support/model-servers/index.js';
import { ANSWER, CLI_SETUPS, type CliName, gitWorkspace, installedBinary, PROMPT } from './scripted-runs.js';

const FIXTURES = path.join(import.meta.dirname, 'fixtures');
const TICKETS_SERVER = path.join(import.meta.dirname, '..', 'support', 'mcp', 'tickets-server.mjs');
const TIMEOUT_MS = 120_000;
const API_KEY = 'test-key-123';
const bwrapSkip = resolveSandboxMode(undefined).mode.kind === 'bwrap' ? false : 'bwrap does not work on this machine';

const cleanup: Array<() => Promise<void> | void> = [];
after(async () => {
  for (const step of cleanup) await step();
});

/** Skip without the CLI, unless in CI, where the test runs and fails on it. */
function cliSkip(name: CliName): string | false {
  if (installedBinary(name) || process.env.CI) return false;
  return `the ${name} CLI is not installed: run scripts/install-agent-clis.sh (HANGAR_AGENT_CLIS_DIR or ~/.cache/hangar/agent-clis)`;
}

interface RunOptions {
  sandbox: SandboxMode['kind'];
  turns: (workspace: string) => ScriptedTurn[];
  history?: TranscriptLine[];
  followups?: string[];
  mcpServers?: HarnessTask['mcpServers'];
  /** Cancels the run at the first translated event that matches. */
  cancelAt?: (event: HarnessEvent) => boolean;
}

/** One real run of a CLI through CliHarness; the server and workspace are removed after the file's tests. */
async function run(name: CliName, options: RunOptions) {
  const binary = installedBinary(name);
  assert.ok(
    binary,
    `the ${name} CLI is not installed, and CI installs it: scripts/install-agent-clis.sh did not run or failed`,
  );
  const setup = CLI_SETUPS[name];
  const workspace = gitWorkspace();
  const server = await setup.server().listen();
  server.script(...options.turns(workspace));
  cleanup.push(
    () => server.close(),
    () => fs.rmSync(workspace, { recursive: true, force: true }),
  );
  // The scripted model server stands where Hangar's API is: on the host's loopback, the one port a networked
  // sandbox still reaches there (model calls go through Hangar's API).
  const harness = new CliHarness(AGENT_CLIS[name], {
    sandbox: resolveSandboxMode(options.sandbox, { apiUrl: () => server.baseURL }).mode,
    hiddenPaths: [],
    maxOutputBytes: 10_000_000,
    timeoutMs: TIMEOUT_MS,
    binaryPath: binary,
  });
  const collected = { output: [] as string[], input: [] as string[], diagnostics: [] as string[] };
  const continuing = (options.history ?? []).length > 0;
  const task: HarnessTask = {
    runId: 'run-1',
    executionId: continuing ? 2 : 1,
    kind: 'agent',
    conversationId: 'conversation-1',
    prompt: PROMPT,
    basePrompt: null,
    followups: options.followups ?? [],
    history: options.history ?? [],
    workspace,
    env: { HANGAR_RUN_ID: 'run-1' },
    agentConfig: {},
    ...(options.mcpServers ? { mcpServers: options.mcpServers } : {}),
    // The catalogue's base_url has the API version in it, as the AI SDK takes it.
    model: {
      id: `${name}-model`,
      provider: setup.provider,
      providerModel: `${name}-test-model`,
      baseUrl: server.baseURL,
      apiKey: API_KEY,
    },
  };
  let cancel: () => void = () => {};
  const session = await harness.start(task, {
    output: (line) => {
      collected.output.push(line);
      if (options.cancelAt && harness.translate(line).some(options.cancelAt)) cancel();
    },
    input: (line) => collected.input.push(line),
    diagnostic: (line) => collected.diagnostics.push(line),
  });
  cancel = () => void session.cancel();
  assert.equal(session.acceptsInput, false);
  assert.equal(session.send('more'), false);
  const exit = await session.exited;
  const events = collected.output.flatMap((line) => harness.translate(line));
  return { workspace, server, exit, events, collected, task, diagnostics: collected.diagnostics.join('\n') };
}

/** The model requests (Claude Code also sends `HEAD /` to check the endpoint is there). */
function modelRequests(server: ScriptedModelServer) {
  return server.requests.filter((request) => request.method === 'POST');
}

function assertModelAndKey(name: CliName, server: ScriptedModelServer): void {
  const requests = modelRequests(server);
  assert.ok(requests.length > 0);
  for (const request of requests) {
    if (name === 'claude') {
      assert.equal(request.url, '/v1/messages?beta=true');
      assert.equal(request.body.model, 'claude-test-model');
      assert.equal(request.headers['x-api-key'], API_KEY);
    } else if (name === 'codex') {
      assert.equal(request.url, '/v1/responses');
      assert.equal(request.body.model, 'codex-test-model');
      assert.equal(request.headers.authorization, `Bearer ${API_KEY}`);
    } else {
      assert.equal(request.url, '/v1beta/models/gemini-test-model:streamGenerateContent?alt=sse');
      assert.equal(request.headers['x-goog-api-key'], API_KEY);
    }
  }
}

/** The events of the scripted run: shell call and result, an edit, a failing command, the answer, usage, done. */
function assertScriptedEvents(name: CliName, events: HarnessEvent[]): void {
  const calls = events.filter((event) => event.type === 'tool_call');
  const results = events.filter((event) => event.type === 'tool_result');
  const shell = { claude: 'Bash', codex: 'shell', gemini: 'run_shell_command' }[name];
  const edit = { claude: 'Edit', codex: 'apply_patch', gemini: 'replace' }[name];
  assert.ok(
    calls.some(
      (call) =>
        call.name === shell && call.category === 'command' && JSON.stringify(call.input).includes('cat hello.txt'),
    ),
  );
  assert.ok(calls.some((call) => call.name === edit && call.category === 'files'));
  // Every call has its result, the first one the file's content.
  assert.deepEqual(
    results.map((result) => result.id),
    calls.map((call) => call.id),
  );
  const catResult = results.find((result) => result.id === calls[0]!.id)!;
  assert.equal(catResult.status, 'completed');
  assert.match(String(catResult.output), /hello/);
  const text = events
    .filter((event) => event.type === 'text')
    .map((event) => event.text)
    .join('');
  assert.ok(text.startsWith('Let me look at the file.'), text);
  assert.ok(text.endsWith(ANSWER), text);
  // Usage once, the totals of the scripted turns.
  const usage = events.filter((event) => event.type === 'usage');
  assert.equal(usage.length, 1);
  const turns = CLI_SETUPS[name].turns('/workspace');
  assert.equal(
    usage[0]!.input_tokens,
    turns.reduce((sum, turn) => sum + turn.usage!.input, 0),
  );
  assert.equal(
    usage[0]!.output_tokens,
    turns.reduce((sum, turn) => sum + turn.usage!.output, 0),
  );
  assert.equal(events.at(-1)!.type, 'done');
}

for (const name of Object.keys(CLI_SETUPS) as CliName[]) {
  describe(`${name} CLI harness`, { skip: cliSkip(name), timeout: 6 * TIMEOUT_MS }, () => {
    for (const sandbox of ['process', 'bwrap'] as const) {
      test(`edits a file with its own tools and answers (${sandbox})`, {
        skip: sandbox === 'bwrap' && bwrapSkip,
        timeout: TIMEOUT_MS,
      }, async () => {
        const { workspace, server, exit, events, collected, task, diagnostics } = await run(name, {
          sandbox,
          turns: CLI_SETUPS[name].turns,
        });
        assert.equal(exit.code, 0, diagnostics);
        assert.equal(fs.readFileSync(path.join(workspace, 'hello.txt'), 'utf8'), 'hello world\n');
        assertScriptedEvents(name, events);
        assertModelAndKey(name, server);
        assert.equal(server.remaining, 0);
        // The prompt reached the model, and the transcript's input is the task, as the conversation shows it.
        assert.ok(JSON.stringify(modelRequests(server)[0]!.body).includes(PROMPT));
        assert.deepEqual(
          collected.input.map((line) => JSON.parse(line)),
          [taskMessage(task)],
        );
        if (process.env.HANGAR_CAPTURE_FIXTURES && sandbox === 'process')
          writeFixture(`${name}.jsonl`, collected.output, workspace);
      });
    }

    test('a model error ends the run with a failed event', { timeout: TIMEOUT_MS }, async () => {
      const { exit, events, collected, workspace } = await run(name, { sandbox: 'process', turns: () => [] });
      assert.notEqual(exit.code, 0);
      const failed = events.findLast((event) => event.type === 'failed');
      assert.ok(failed, JSON.stringify(events));
      assert.match(failed.message, /no turn left/);
      if (process.env.HANGAR_CAPTURE_FIXTURES) writeFixture(`${name}-error.jsonl`, collected.output, workspace);
    });

    for (const sandbox of ['process', 'bwrap'] as const) {
      // Gemini CLI starts shell commands in a session of their own, out of the process group: the process sandbox
      // finds them by walking the tree (bwrap's PID namespace takes them along anyway).
      test(`cancel stops the CLI and the command it runs (${sandbox})`, {
        skip: sandbox === 'bwrap' && bwrapSkip,
        timeout: TIMEOUT_MS,
      }, async () => {
        // A marker in the command line finds the command's process, whatever its PID namespace.
        const marker = `${name}-${sandbox}-cancel-${process.pid}`;
        const command = `sleep 60 # ${marker}`;
        const input = { claude: { command }, codex: { cmd: command }, gemini: { command } }[name];
        const shell = { claude: 'Bash', codex: 'exec_command', gemini: 'run_shell_command' }[name];
        const { exit } = await run(name, {
          sandbox,
          turns: () => [{ toolCalls: [{ name: shell, input }] }],
          cancelAt: (event) => event.type === 'tool_call',
        });
        assert.equal(exit.killed, true);
        const left = processesWith(marker);
        left.forEach((pid) => process.kill(pid, 'SIGKILL'));
        assert.deepEqual(left, []);
      });
    }

    test("uses the run's MCP servers: a stdio one in the sandbox and an HTTP one with its headers", {
      timeout: TIMEOUT_MS,
    }, async () => {
      const docs = await new DocsMcpServer().listen();
      cleanup.push(() => docs.close());
      // How each CLI names an MCP server's tools (Codex offers them in a namespace per server).
      const ticketsTool = {
        claude: { name: 'mcp__tickets__lookup_ticket' },
        codex: { name: 'lookup_ticket', namespace: 'mcp__tickets' },
        gemini: { name: 'mcp_tickets_lookup_ticket' },
      }[name];
      const docsTool = {
        claude: { name: 'mcp__docs__search_docs' },
        codex: { name: 'search_docs', namespace: 'mcp__docs' },
        gemini: { name: 'mcp_docs_search_docs' },
      }[name];
      const { exit, server, events, diagnostics } = await run(name, {
        sandbox: 'process',
        mcpServers: {
          tickets: { command: process.execPath, args: [TICKETS_SERVER], env: { TICKETS_LABEL: 'via-cli' } },
          docs: { url: docs.url, headers: { Authorization: 'Bearer docs-secret' } },
        },
        turns: () => [
          { toolCalls: [{ ...ticketsTool, input: { id: 'T-9' } }] },
          { toolCalls: [{ ...docsTool, input: { query: 'mcp' } }] },
          { text: 'Looked it up.' },
        ],
      });
      const offered = JSON.stringify(modelRequests(server)[0]?.body.tools ?? modelRequests(server)[0]?.body);
      assert.equal(exit.code, 0, `${diagnostics}\n${offered.slice(0, 3000)}`);
      const results = events
        .filter((event) => event.type === 'tool_result')
        .map((event) => JSON.stringify(event.output));
      assert.ok(
        results.some(
          (output) => output.includes('Ticket T-9: the login page is slow') && output.includes('label via-cli'),
        ),
        results.join('\n'),
      );
      assert.ok(
        results.some((output) => output.includes('Docs about mcp: use the cache.')),
        results.join('\n'),
      );
      assert.ok(docs.headers.some((headers) => headers.authorization === 'Bearer docs-secret'));
    });

    test("a continuation resumes the CLI's own session, kept in the transcript, in a new workspace", {
      timeout: TIMEOUT_MS,
    }, async () => {
      const first = await run(name, { sandbox: 'process', turns: () => [{ text: 'The secret word is BANANA.' }] });
      assert.equal(first.exit.code, 0, first.diagnostics);
      const kept = first.collected.output.filter((line) => line.startsWith('{"type":"hangar_cli_session"'));
      assert.equal(kept.length, 1, 'the session is kept as the last line of the transcript');
      assert.equal(first.collected.output.at(-1), kept[0]);
      assert.deepEqual(AGENT_CLIS[name].translate(kept[0]!), [], 'the kept session is no event');
      const at = new Date();
      const history: TranscriptLine[] = [
        ...first.collected.input.map((line) => ({ executionId: 1, stream: 'input' as const, line, at })),
        ...first.collected.output.map((line) => ({ executionId: 1, stream: 'output' as const, line, at })),
      ];
      const second = await run(name, {
        sandbox: 'process',
        turns: () => [{ text: 'Still BANANA.' }],
        history,
        followups: ['What was the word?'],
      });
      assert.equal(second.exit.code, 0, second.diagnostics);
      assert.notEqual(second.workspace, first.workspace);
      const sent = JSON.stringify(modelRequests(second.server)[0]!.body);
      // The CLI sent its own record of the first turn, and was told only what is new: no recap.
      for (const said of [PROMPT, 'The secret word is BANANA.', 'What was the word?'])
        assert.ok(sent.includes(said), `the model got ${JSON.stringify(said)}`);
      assert.ok(!sent.includes('earlier_conversation'), 'no recap when the session is resumed');
    });

    test('a continuation gives the CLI the earlier conversation and the follow-up', {
      timeout: TIMEOUT_MS,
    }, async () => {
      // The first execution as the transcript has it: the task, then the CLI's stream.
      const first = fs
        .readFileSync(path.join(FIXTURES, `${name}.jsonl`), 'utf8')
        .split('\n')
        .filter((line) => line !== '');
      const at = new Date();
      const history: TranscriptLine[] = [
        {
          executionId: 1,
          stream: 'input',
          line: JSON.stringify({ type: 'task', execution_id: 1, kind: 'agent', prompt: PROMPT, followups: [] }),
          at,
        },
        ...first.map((line) => ({ executionId: 1, stream: 'output' as const, line, at })),
      ];
      const followup = 'Now make it shout.';
      const { exit, server, events, diagnostics } = await run(name, {
        sandbox: 'process',
        turns: () => [{ text: 'It shouts now.' }],
        history,
        followups: [followup],
      });
      assert.equal(exit.code, 0, diagnostics);
      const sent = JSON.stringify(modelRequests(server)[0]!.body);
      for (const said of [PROMPT, ANSWER, followup])
        assert.ok(sent.includes(said), `the model got ${JSON.stringify(said)}`);
      assert.equal(
        events
          .filter((event) => event.type === 'text')
          .map((event) => event.text)
          .join(''),
        'It shouts now.',
      );
    });
  });
}

describe('CLI harness start errors', () => {
  const task = (workspace: string, model: HarnessTask['model']): HarnessTask => ({
    runId: 'run-1',
    executionId: 1,
    kind: 'agent',
    conversationId: 'conversation-1',
    prompt: PROMPT,
    basePrompt: null,
    followups: [],
    history: [],
    workspace,
    env: {},
    agentConfig: {},
    model,
  });
  const model = {
    id: 'claude-model',
    provider: 'ANTHROPIC' as const,
    providerModel: 'claude-test-model',
    apiKey: API_KEY,
  };

  test('a missing binary is integration_not_configured, naming the binary and its npm package', async () => {
    const workspace = gitWorkspace();
    cleanup.push(() => fs.rmSync(workspace, { recursive: true, force: true }));
    const options = {
      sandbox: resolveSandboxMode('process').mode,
      hiddenPaths: [],
      maxOutputBytes: 1_000_000,
      timeoutMs: TIMEOUT_MS,
    };
    const configured = new CliHarness(AGENT_CLIS.codex, {
      ...options,
      binaryPath: path.join(workspace, 'no-such-codex'),
    });
    const input: string[] = [];
    const sink: HarnessSink = { output: () => {}, input: (line) => input.push(line), diagnostic: () => {} };
    await assert.rejects(configured.start(task(workspace, model), sink), (error: unknown) => {
      assert.ok(error instanceof HarnessStartError);
      assert.equal(error.errorCode, 'integration_not_configured');
      assert.match(error.message, /codex/);
      assert.match(error.message, /no-such-codex/);
      assert.match(error.message, /@openai\/codex/);
      return true;
    });
    assert.deepEqual(input, [], 'nothing was started, so nothing was said to it');
  });

  test('a run without a model is integration_not_configured', async () => {
    const workspace = gitWorkspace();
    cleanup.push(() => fs.rmSync(workspace, { recursive: true, force: true }));
    // Any executable will do: the model is checked before anything starts.
    const harness = new CliHarness(AGENT_CLIS.claude, {
      sandbox: resolveSandboxMode('process').mode,
      hiddenPaths: [],
      maxOutputBytes: 1_000_000,
      timeoutMs: TIMEOUT_MS,
      binaryPath: process.execPath,
    });
    const sink: HarnessSink = { output: () => {}, input: () => {}, diagnostic: () => {} };
    await assert.rejects(
      harness.start(task(workspace, undefined), sink),
      (error: unknown) =>
        error instanceof HarnessStartError &&
        error.errorCode === 'integration_not_configured' &&
        /model/.test(error.message),
    );
  });
});

/** Running (not zombie) processes whose command line holds `marker`. */
function processesWith(marker: string): number[] {
  return fs
    .readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .flatMap((name) => {
      try {
        const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
        const running = stat[stat.lastIndexOf(')') + 2] !== 'Z';
        return running && fs.readFileSync(`/proc/${name}/cmdline`, 'utf8').includes(marker) ? [Number(name)] : [];
      } catch {
        return [];
      }
    });
}

/** Saves a run's stream as a fixture, the workspace path made /workspace so the fixtures do not depend on it. */
function writeFixture(file: string, lines: string[], workspace: string): void {
  fs.writeFileSync(
    path.join(FIXTURES, file),
    `${lines.map((line) => line.replaceAll(workspace, '/workspace')).join('\n')}\n`,
  );
}
