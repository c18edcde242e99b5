import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { eventuallySignalled, getRun, script, waitForState } from '../support/engine.js';
import type { AnthropicServer } from '../support/model-servers/index.js';
import type { TestServer } from '../support/server.js';
import { type SpendStack, startSpendServer } from '../support/spend-server.js';

// A run continued by follow-ups spends over all its executions: its request_usage is their sum, its spend cap is on
// that sum, and so is its team's month (issue 29). Oz against a scripted model server whose steps cost 0.30 USD
// (100k input tokens at 3 USD per million), and the script harness (0.01 USD per usage step).
let stack: SpendStack;
let hangar: TestServer;
let anthropic: AnthropicServer;

before(async () => {
  stack = await startSpendServer();
  ({ hangar, anthropic } = stack);
});
after(async () => {
  await stack?.stop();
});

/** Polls the run (as `apiKey`'s team) until `done(run)` holds. */
async function runWhen(runId: string, apiKey: string | undefined, done: (run: any) => boolean): Promise<any> {
  let run: any;
  await eventuallySignalled(`run ${runId} gets there`, async () => {
    run = await getRun(hangar, runId, apiKey);
    return done(run);
  });
  return run;
}

test("a continued run's cap counts its earlier executions: the second crosses it and is stopped", async () => {
  const step = { toolCalls: [{ name: 'search_files', input: { pattern: 'x' } }], usage: { input: 100_000, output: 0 } };
  anthropic.script({ text: 'first answer', usage: { input: 100_000, output: 0 } });
  const created = await hangar.request('POST', '/agent/runs', {
    body: { prompt: 'spend', config: { model_id: 'sonnet-test', max_cost_usd: 0.5 } },
  });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  const runId = created.body.run_id;
  const first = await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR');
  assert.equal(first.state, 'SUCCEEDED', JSON.stringify(first.status_message));
  assert.equal(first.request_usage.inference_cost, 0.3);

  // 0.30 more: under the cap on its own, over it with the first execution's 0.30.
  const before = anthropic.requests.length;
  anthropic.script(step, { text: 'done' });
  const followup = await hangar.request('POST', `/agent/runs/${runId}/followups`, { body: { message: 'more' } });
  assert.equal(followup.status, 200, JSON.stringify(followup.body));
  // The follow-up queued the run again before it answered: the next end is the second execution's.
  const second = await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR');
  assert.equal(second.state, 'FAILED', JSON.stringify(second.status_message));
  assert.equal(second.status_message.error_code, 'budget_exceeded');
  assert.match(second.status_message.message, /spend cap of 0\.5 USD .* spent 0\.6000 USD/);
  // Stopped on the first step's usage: the model was not asked again (or, at worst, the request in flight when the
  // stop landed: the "within one model step").
  const asked = anthropic.requests.length - before;
  assert.ok(asked >= 1 && asked <= 2, `${asked} model requests`);
  // Both executions' steps, and at most the small answer of a request that was in flight when the stop landed.
  assert.ok(second.request_usage.inference_cost >= 0.6 && second.request_usage.inference_cost < 0.61);
  assert.ok(second.request_usage.input_tokens >= 200_000 && second.request_usage.input_tokens < 210_000);
});

test("a continued run's request_usage is the sum of its executions, and its team's month spend counts the sum", async () => {
  const team = await hangar.createTeamWithUser();
  const asTeam = { apiKey: team.apiKey };
  const created = await hangar.request('POST', '/agent/runs', {
    ...asTeam,
    body: { prompt: script({ usage: true }, { done: 'ok' }), config: { harness: { type: 'script' } } },
  });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  const runId = created.body.run_id;
  const first = await runWhen(runId, team.apiKey, (run) => run.state === 'SUCCEEDED');
  assert.deepEqual(first.request_usage, {
    input_tokens: 10,
    output_tokens: 5,
    total_tokens: 15,
    inference_cost: 0.01,
    inference_cost_usd: 0.01,
  });

  // Each follow-up runs the script again: 0.01 USD and 15 tokens more each time.
  for (const [executions, message, cost] of [
    [2, 'again', 0.02],
    [3, 'and again', 0.03],
  ] as const) {
    const followup = await hangar.request('POST', `/agent/runs/${runId}/followups`, { ...asTeam, body: { message } });
    assert.equal(followup.status, 200, JSON.stringify(followup.body));
    const ended = await runWhen(runId, team.apiKey, (run) => ['SUCCEEDED', 'FAILED', 'ERROR'].includes(run.state));
    assert.equal(ended.state, 'SUCCEEDED', JSON.stringify(ended.status_message));
    assert.deepEqual(ended.request_usage, {
      input_tokens: 10 * executions,
      output_tokens: 5 * executions,
      total_tokens: 15 * executions,
      inference_cost: cost,
      inference_cost_usd: cost,
    });
  }
  const spend = await hangar.request('GET', '/api/v1/team/spend', asTeam);
  assert.equal(spend.status, 200);
  assert.equal(spend.body.month_spend_usd, 0.03);
});
