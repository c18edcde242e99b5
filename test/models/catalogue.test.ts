import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { parseOperatorConfig } from '../../src/config-file.js';
import { harnessEnv, script, waitForState } from '../support/engine.js';
import { createRun } from '../support/runs.js';
import { startTestServer, type TestServer } from '../support/server.js';

const servers: TestServer[] = [];
after(async () => {
  for (const server of servers) await server.stop();
});

async function serverWith(env: Record<string, string>, operatorFile?: string): Promise<TestServer> {
  const extra: Record<string, string> = {};
  if (operatorFile !== undefined) {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-models-')), 'hangar.yaml');
    fs.writeFileSync(file, operatorFile);
    extra.HANGAR_CONFIG = file;
  }
  const server = await startTestServer({ ...env, ...extra }, { role: 'api' });
  servers.push(server);
  return server;
}

const models = async (hangar: TestServer) => {
  const response = await hangar.request('GET', '/agent/models');
  assert.equal(response.status, 200, JSON.stringify(response.body));
  return response.body;
};

const OPERATOR_FILE = `
default_model: local-coder
disabled_models: [gpt-4o]
models:
  - id: local-coder
    display_name: Local coder
    provider: UNKNOWN
    model: qwen2.5-coder:7b
    base_url: http://127.0.0.1:11434/v1
    cost: { input: 0, output: 0 }
  - id: gpt-4o
    provider: OPENAI
    vision_supported: true
    cost: { input: 2.5, output: 10 }
  - id: sonnet
    display_name: Sonnet
    provider: ANTHROPIC
    model: claude-sonnet-4-20250514
    reasoning_level: high
    cost: { input: 3, output: 15 }
`;

describe('model catalogue', () => {
  test('the built-in list: every model with its cost; without credentials, disabled with the variable to set', async () => {
    const hangar = await serverWith({});
    const list = await models(hangar);
    assert.ok(list.models.length >= 6);
    const sonnet = list.models.find((model: { id: string }) => model.id === 'claude-sonnet-4');
    assert.deepEqual(sonnet.cost, { currency: 'USD', input_per_million_tokens: 3, output_per_million_tokens: 15 });
    assert.equal(sonnet.provider, 'ANTHROPIC');
    assert.equal(sonnet.disable_reason, 'ADMIN_DISABLED');
    assert.match(sonnet.disabled_reason_detail, /ANTHROPIC_API_KEY/);
    assert.ok(list.models.every((model: { disable_reason?: string }) => model.disable_reason === 'ADMIN_DISABLED'));
    assert.equal(list.default_model_id, list.models[0].id);
  });

  test("credentials in the server's environment make a provider's models usable, and the default the first of them", async () => {
    const hangar = await serverWith({ GEMINI_API_KEY: 'g-key' });
    const list = await models(hangar);
    for (const model of list.models) {
      assert.equal(model.disable_reason === undefined, model.provider === 'GOOGLE', model.id);
    }
    assert.equal(list.default_model_id, 'gemini-2.5-pro');
  });

  test("the operator's list: its default, an admin-disabled model, a local OpenAI-compatible one without a key", async () => {
    const hangar = await serverWith({ ANTHROPIC_API_KEY: 'a-key', OPENAI_API_KEY: 'o-key' }, OPERATOR_FILE);
    const list = await models(hangar);
    assert.equal(list.default_model_id, 'local-coder');
    assert.deepEqual(
      list.models.map((model: { id: string }) => model.id),
      ['local-coder', 'gpt-4o', 'sonnet'],
    );
    const [local, gpt, sonnet] = list.models;
    assert.equal(local.provider, 'UNKNOWN');
    assert.equal(local.disable_reason, undefined);
    assert.equal(gpt.disable_reason, 'ADMIN_DISABLED');
    assert.match(gpt.disabled_reason_detail, /administrator turned this model off/);
    assert.equal(gpt.display_name, 'gpt-4o', 'the id when no display name is given');
    assert.equal(gpt.vision_supported, true);
    assert.equal(sonnet.reasoning_level, 'high');
    assert.equal(sonnet.disable_reason, undefined);
  });

  test('a run of a built-in harness with an unknown, disabled or unconfigured model is refused at once', async () => {
    const hangar = await serverWith(
      { ANTHROPIC_API_KEY: 'a-key' },
      OPERATOR_FILE.concat('  - id: gemini\n    provider: GOOGLE\n    cost: { input: 1, output: 2 }\n'),
    );
    const create = (config: Record<string, unknown>) =>
      hangar.request('POST', '/agent/runs', { body: { prompt: 'x', config } });
    const unknown = await create({ model_id: 'no-such-model', harness: { type: 'oz' } });
    assert.equal(unknown.status, 400);
    assert.match(unknown.body.detail, /not in this server's catalogue/);
    const disabled = await create({ harness: { type: 'codex', model_id: 'gpt-4o' } });
    assert.equal(disabled.status, 403);
    assert.equal(disabled.body.error_code, 'integration_disabled');
    const unconfigured = await create({ model_id: 'gemini', harness: { type: 'gemini' } });
    assert.equal(unconfigured.status, 422);
    assert.equal(unconfigured.body.error_code, 'integration_not_configured');
    assert.match(unconfigured.body.detail, /GOOGLE_GENERATIVE_AI_API_KEY or GEMINI_API_KEY/);
    assert.equal((await create({ model_id: 'sonnet', harness: { type: 'claude' } })).status, 200);
    // Without a harness type the harness is decided where the run executes: the model is checked when it starts.
    assert.equal((await create({ model_id: 'anything-goes' })).status, 200);
    // A model the harness cannot call is refused with the providers it can.
    const mismatch = await create({ model_id: 'sonnet', harness: { type: 'codex' } });
    assert.equal(mismatch.status, 400);
    assert.match(mismatch.body.detail, /codex harness works with OPENAI models/);
  });

  test('a catalogue that contradicts itself stops the start with the reason', () => {
    const parse = (text: string) => () => parseOperatorConfig(text, 'hangar.yaml', {});
    assert.throws(
      parse('models:\n  - id: x\n    provider: UNKNOWN\n    cost: { input: 0, output: 0 }\n'),
      /needs a base_url/,
    );
    assert.throws(parse('default_model: nope\n'), /model nope is not in the catalogue/);
    assert.throws(parse('disabled_models: [nope]\n'), /model nope is not in the catalogue/);
    assert.throws(
      parse(
        'models:\n  - id: x\n    provider: OPENAI\n    cost: { input: 0, output: 0 }\n  - id: x\n    provider: OPENAI\n    cost: { input: 0, output: 0 }\n',
      ),
      /lists x twice/,
    );
    assert.throws(parse('models:\n  - id: x\n    provider: OPENAI\n'), /cost/);
  });

  test('built-in harness settings: defaults, paths relative to the file, and what the file may not say', () => {
    const parse = (text: string) => parseOperatorConfig(text, 'hangar.yaml', {}, '/etc/hangar');
    const defaults = parse('{}');
    assert.equal(defaults.defaultHarness, 'oz');
    assert.equal(defaults.builtInConfigured, false);
    assert.deepEqual(defaults.builtIn.oz, { timeoutMinutes: 60, network: false, maxSteps: 50 });
    const set = parse(
      'builtin_harnesses:\n  oz: { max_steps: 7, network: true }\n  claude: { path: ./bin/claude, timeout_minutes: 5 }\n',
    );
    assert.equal(set.builtInConfigured, true);
    assert.deepEqual(set.builtIn.oz, { timeoutMinutes: 60, network: true, maxSteps: 7 });
    assert.equal(set.builtIn.claude.path, '/etc/hangar/bin/claude');
    assert.equal(set.builtIn.claude.timeoutMinutes, 5);
    // One command harness alone stays the default; default_harness may name a built-in one.
    assert.equal(parse('harnesses:\n  mine: { command: [x] }\n').defaultHarness, 'mine');
    assert.equal(parse('default_harness: codex\nharnesses:\n  mine: { command: [x] }\n').defaultHarness, 'codex');
    assert.throws(() => parse('builtin_harnesses:\n  cursor: {}\n'), /builtin_harnesses/);
    assert.throws(() => parse('builtin_harnesses:\n  oz: { max_steps: 0 }\n'), /max_steps/);
    assert.throws(
      () => parse('harnesses:\n  claude: { command: [x] }\n'),
      /a built-in harness's; configure it under builtin_harnesses/,
    );
    assert.throws(() => parse('default_harness: nope\n'), /neither a built-in harness/);
  });

  test("tokens a harness reports without a cost are priced at the catalogue's rates for the run's model", async () => {
    const hangar = await startTestServer(harnessEnv());
    servers.push(hangar);
    const usage = (input: number, output: number) => ({
      emit: { type: 'usage', input_tokens: input, output_tokens: output },
    });
    const priced = await createRun(hangar, {
      prompt: script(usage(200_000, 0), usage(0, 100_000)),
      config: { model_id: 'claude-sonnet-4' },
    });
    const run = await waitForState(hangar, priced, 'SUCCEEDED', 'FAILED', 'ERROR');
    assert.equal(run.request_usage.total_tokens, 300_000);
    // 0.2M input at $3 and 0.1M output at $15.
    assert.ok(Math.abs(run.request_usage.inference_cost - 2.1) < 1e-9, JSON.stringify(run.request_usage));
    const unknownModel = await createRun(hangar, {
      prompt: script(usage(1000, 1000)),
      config: { model_id: 'not-in-catalogue' },
    });
    assert.equal(
      (await waitForState(hangar, unknownModel, 'SUCCEEDED', 'FAILED', 'ERROR')).request_usage.inference_cost,
      undefined,
    );
    const reported = await createRun(hangar, {
      prompt: script({ usage: true }),
      config: { model_id: 'claude-sonnet-4' },
    });
    assert.equal(
      (await waitForState(hangar, reported, 'SUCCEEDED', 'FAILED', 'ERROR')).request_usage.inference_cost,
      0.01,
      "the harness's own cost is kept",
    );
  });
});
