/**
 * Issue 47, finding 5: the model proxy meters what goes through it. A CLI run's sandbox holds the task token,
 * which is the CLI's key to the proxy; with it, a program in the sandbox made 25 calls at once on the operator's
 * key, worth 225 USD at the catalogue's prices, on a run capped at 1 USD of a team with a 2 USD budget, and Hangar
 * recorded nothing of it. Here the same calls are made with a running execution's task token (handed out by a
 * stand-in CLI, fixtures/proxy-client-cli.mjs, as any program in its sandbox could) against a real server and a
 * model double that reports usage in its provider's wire format: the proxy forwards one, charges what the double
 * reported at the catalogue's price, refuses the rest, stops the run at its cap, and the team's next run is
 * refused by its budget. Calls for a disabled model, and provider paths that are not inference, never reach the
 * provider; streamed answers of every format are charged while the run goes.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { eventually, eventuallySignalled, getRun } from '../support/engine.js';
import {
  AnthropicServer,
  GeminiServer,
  OpenAIChatServer,
  OpenAIResponsesServer,
} from '../support/model-servers/index.js';
import { createRun } from '../support/runs.js';
import { startTestServer, type TestServer } from '../support/server.js';

const CLIENT_CLI = fileURLToPath(new URL('./fixtures/proxy-client-cli.mjs', import.meta.url));
/** 100k input and 100k output tokens at 15 and 75 USD per million: 9 USD a call. */
const CALL_USAGE = { input: 100_000, output: 100_000 };
const CALL_COST = (100_000 * 15 + 100_000 * 75) / 1_000_000;

const anthropic = new AnthropicServer();
const responses = new OpenAIResponsesServer();
const chat = new OpenAIChatServer();
const gemini = new GeminiServer();
let hangar: TestServer;
let configDirectory: string;

before(async () => {
  await Promise.all([anthropic, responses, chat, gemini].map((server) => server.listen()));
  configDirectory = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-proxy-metering-'));
  const file = path.join(configDirectory, 'hangar.yaml');
  const model = (id: string, provider: string, name: string, baseUrl: string, cost = { input: 15, output: 75 }) => ({
    id,
    provider,
    model: name,
    base_url: baseUrl,
    api_key_env: `METERING_${provider}_KEY`,
    cost,
  });
  fs.writeFileSync(
    file,
    YAML.stringify({
      builtin_harnesses: {
        claude: { path: CLIENT_CLI, timeout_minutes: 3 },
        codex: { path: CLIENT_CLI, timeout_minutes: 3 },
        gemini: { path: CLIENT_CLI, timeout_minutes: 3 },
      },
      models: [
        model('opus-test', 'ANTHROPIC', 'claude-opus-test', anthropic.baseURL),
        // Same endpoint and key, turned off by the operator.
        model('retired-test', 'ANTHROPIC', 'claude-retired-test', anthropic.baseURL),
        model('gpt-test', 'OPENAI', 'gpt-test-model', responses.baseURL, { input: 2, output: 8 }),
        model('chat-test', 'OPENAI', 'chat-test-model', chat.baseURL, { input: 2, output: 8 }),
        model('gemini-test', 'GOOGLE', 'gemini-test-model', gemini.baseURL, { input: 1, output: 4 }),
      ],
      disabled_models: ['retired-test'],
    }),
  );
  hangar = await startTestServer({
    HANGAR_CONFIG: file,
    METERING_ANTHROPIC_KEY: 'sk-ant-operator',
    METERING_OPENAI_KEY: 'sk-openai-operator',
    METERING_GOOGLE_KEY: 'google-operator',
  });
});

after(async () => {
  await hangar?.stop();
  await Promise.all([anthropic, responses, chat, gemini].map((server) => server.close()));
  if (configDirectory) fs.rmSync(configDirectory, { recursive: true, force: true });
});

/** Starts a run of `harness` on `modelId` and waits for the task token its stand-in CLI hands out. */
async function runningExecution(
  harness: 'claude' | 'codex' | 'gemini',
  modelId: string,
  extra: Record<string, unknown> = {},
  apiKey?: string,
): Promise<{ runId: string; token: string }> {
  const runId = await createRun(
    hangar,
    { prompt: 'call the model', config: { harness: { type: harness, model_id: modelId }, ...extra } },
    apiKey,
  );
  let token: string | undefined;
  await eventually(`run ${runId} hands out its task token`, async () => {
    const timeline = await hangar.request('GET', `/agent/runs/${runId}/timeline`, apiKey ? { apiKey } : {});
    token = /token=(hgt_[A-Za-z0-9._-]+)/.exec(JSON.stringify(timeline.body))?.[1];
    if (token) return true;
    const run = await getRun(hangar, runId, apiKey);
    if (['FAILED', 'ERROR', 'SUCCEEDED'].includes(run.state)) throw new Error(`run ended: ${JSON.stringify(run)}`);
    return false;
  });
  return { runId, token: token! };
}

function proxy(provider: string, rest: string, token: string, body: unknown, method = 'POST'): Promise<Response> {
  return fetch(`${hangar.apiUrl}/harness-support/model-proxy/${provider}/${rest}`, {
    method,
    headers: { 'content-type': 'application/json', 'x-api-key': token, authorization: `Bearer ${token}` },
    ...(method === 'POST' ? { body: JSON.stringify(body) } : {}),
  });
}

const ENDED = ['CANCELLED', 'FAILED', 'SUCCEEDED', 'ERROR'];

async function ended(runId: string, apiKey?: string): Promise<any> {
  let run: any;
  await eventuallySignalled(`run ${runId} ends`, async () => {
    run = await getRun(hangar, runId, apiKey);
    return ENDED.includes(run.state);
  });
  return run;
}

async function cancel(runId: string, apiKey?: string): Promise<void> {
  await hangar.request('POST', `/agent/runs/${runId}/cancel`, apiKey ? { apiKey } : {});
  await ended(runId, apiKey);
}

// One at a time: the tests share the model doubles and their scripts.
describe('the model proxy meters and limits what it forwards', { timeout: 180_000, concurrency: 1 }, () => {
  test('25 calls at once on a run capped at 1 USD: one is forwarded and charged at the catalogue price, the rest refused, the team budget stops the next run', async () => {
    const team = await hangar.createTeamWithUser();
    const budget = await hangar.request('PUT', `/api/v1/admin/teams/${team.teamUid}/budget`, {
      body: { monthly_budget_usd: 2 },
    });
    assert.equal(budget.status, 200, JSON.stringify(budget.body));
    const { runId, token } = await runningExecution('claude', 'opus-test', { max_cost_usd: 1 }, team.apiKey);
    const before = anthropic.requests.length;
    anthropic.script(...Array.from({ length: 25 }, () => ({ text: 'an expensive answer', usage: CALL_USAGE })));

    const answers = await Promise.all(
      Array.from({ length: 25 }, () =>
        proxy('anthropic', 'v1/messages', token, {
          model: 'claude-opus-test',
          max_tokens: 100_000,
          messages: [{ role: 'user', content: 'write a long essay' }],
        }).then(async (response) => ({ status: response.status, body: await response.text() })),
      ),
    );
    const forwarded = answers.filter((answer) => answer.status === 200);
    assert.equal(forwarded.length, 1, `answers: ${answers.map((answer) => answer.status).join(', ')}`);
    assert.equal(anthropic.requests.length - before, 1, 'only the admitted call reached the provider');
    // The refusals say why (the cap or, once the run is stopped, its execution is over): none is a provider error.
    for (const refused of answers.filter((answer) => answer.status !== 200))
      assert.ok([401, 403, 409].includes(refused.status), `${refused.status} ${refused.body}`);
    assert.ok(answers.some((answer) => answer.status === 403 && /spend cap of 1 USD/.test(answer.body)));

    // The run is stopped at its cap, and what it spent is what the provider reported, at the catalogue's price.
    anthropic.discardTurns();
    const run = await ended(runId, team.apiKey);
    assert.equal(run.state, 'FAILED', JSON.stringify(run.status_message));
    assert.equal(run.status_message.error_code, 'budget_exceeded');
    assert.equal(run.request_usage.input_tokens, CALL_USAGE.input);
    assert.equal(run.request_usage.output_tokens, CALL_USAGE.output);
    assert.ok(Math.abs(run.request_usage.inference_cost - CALL_COST) < 1e-9, JSON.stringify(run.request_usage));

    // The team's budget counts it: its next run is refused.
    const next = await hangar.request('POST', '/agent/runs', {
      apiKey: team.apiKey,
      body: { prompt: 'again', config: { harness: { type: 'claude', model_id: 'opus-test' } } },
    });
    assert.equal(next.status, 403, JSON.stringify(next.body));
    assert.equal(next.body.error_code, 'budget_exceeded');
  });

  test("a run without a cap is refused calls once its team's budget is spent", async () => {
    const team = await hangar.createTeamWithUser();
    await hangar.request('PUT', `/api/v1/admin/teams/${team.teamUid}/budget`, { body: { monthly_budget_usd: 2 } });
    const { runId, token } = await runningExecution('claude', 'opus-test', {}, team.apiKey);
    anthropic.script({ text: 'first', usage: CALL_USAGE });
    const body = { model: 'claude-opus-test', max_tokens: 1000, messages: [{ role: 'user', content: 'hi' }] };
    const first = await proxy('anthropic', 'v1/messages', token, body);
    assert.equal(first.status, 200);
    await first.text();
    // Recorded on the run while it goes, so the team's month spend has it.
    await eventually('the call is recorded on the run', async () => {
      const run = await getRun(hangar, runId, team.apiKey);
      return Math.abs((run.request_usage?.inference_cost ?? 0) - CALL_COST) < 1e-9;
    });
    const before = anthropic.requests.length;
    const second = await proxy('anthropic', 'v1/messages', token, body);
    assert.equal(second.status, 403);
    const problem = (await second.json()) as { error_code: string; detail: string };
    assert.equal(problem.error_code, 'budget_exceeded');
    assert.match(problem.detail, /monthly budget of 2\.00 USD/);
    assert.equal(anthropic.requests.length, before, 'the refused call did not reach the provider');
    await cancel(runId, team.apiKey);
  });

  test('a model the operator disabled, a model outside the catalogue and non-inference paths are refused before the provider', async () => {
    const { runId, token } = await runningExecution('claude', 'opus-test');
    const before = anthropic.requests.length;
    const message = (model: string) => ({ model, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });

    const disabled = await proxy('anthropic', 'v1/messages', token, message('claude-retired-test'));
    assert.equal(disabled.status, 403);
    assert.equal(((await disabled.json()) as any).error_code, 'integration_disabled');
    const unknown = await proxy('anthropic', 'v1/messages', token, message('claude-opus-4-1-20250805'));
    assert.equal(unknown.status, 403);
    assert.equal(((await unknown.json()) as any).error_code, 'not_authorized');

    for (const [rest, method] of [
      ['v1/files', 'POST'],
      ['v1/files', 'GET'],
      ['v1/messages/batches', 'POST'],
      ['v1/models', 'GET'],
      ['v1/messages/../files', 'POST'],
    ] as const) {
      const response = await proxy('anthropic', rest, token, message('claude-opus-test'), method);
      assert.equal(response.status, 404, `${method} ${rest}`);
      assert.match(response.headers.get('content-type') ?? '', /problem\+json/, `${method} ${rest}: Hangar's refusal`);
      assert.equal(((await response.json()) as any).error_code, 'resource_not_found');
    }
    assert.equal(anthropic.requests.length, before, 'nothing reached the provider');
    await cancel(runId);
  });

  test('streamed answers are charged as they arrive: Anthropic messages, OpenAI responses and chat completions, Gemini', async () => {
    const usage = { input: 1200, output: 300 };
    const cases = [
      {
        harness: 'claude' as const,
        modelId: 'opus-test',
        server: anthropic,
        provider: 'anthropic',
        rest: 'v1/messages',
        body: { model: 'claude-opus-test', max_tokens: 500, stream: true, messages: [{ role: 'user', content: 'hi' }] },
        price: { input: 15, output: 75 },
      },
      {
        harness: 'codex' as const,
        modelId: 'gpt-test',
        server: responses,
        provider: 'openai',
        rest: 'responses',
        body: { model: 'gpt-test-model', stream: true, input: 'hi' },
        price: { input: 2, output: 8 },
      },
      {
        harness: 'codex' as const,
        modelId: 'chat-test',
        server: chat,
        provider: 'openai',
        rest: 'chat/completions',
        // No stream_options: the proxy asks for the usage chunk itself.
        body: { model: 'chat-test-model', stream: true, messages: [{ role: 'user', content: 'hi' }] },
        price: { input: 2, output: 8 },
      },
      {
        harness: 'gemini' as const,
        modelId: 'gemini-test',
        server: gemini,
        provider: 'google',
        rest: 'v1beta/models/gemini-test-model:streamGenerateContent?alt=sse',
        body: { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] },
        price: { input: 1, output: 4 },
      },
    ];
    for (const each of cases) {
      const { runId, token } = await runningExecution(each.harness, each.modelId);
      each.server.script({ text: 'streamed', usage });
      const response = await proxy(each.provider, each.rest, token, each.body);
      assert.equal(response.status, 200, `${each.rest}: ${await response.clone().text()}`);
      assert.match(response.headers.get('content-type') ?? '', /text\/event-stream/, each.rest);
      assert.match(await response.text(), /streamed/, `${each.rest}: the stream came through`);
      const expected = (usage.input * each.price.input + usage.output * each.price.output) / 1_000_000;
      await eventually(`${each.rest}: the streamed usage is recorded on the running run`, async () => {
        const run = await getRun(hangar, runId);
        return (
          run.state === 'INPROGRESS' &&
          run.request_usage?.input_tokens === usage.input &&
          run.request_usage?.output_tokens === usage.output &&
          Math.abs(run.request_usage.inference_cost - expected) < 1e-9
        );
      });
      await cancel(runId);
    }
  });
});
