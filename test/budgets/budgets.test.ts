import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { eventually, eventuallySignalled, getRun, script, waitForState } from '../support/engine.js';
import type { AnthropicServer } from '../support/model-servers/index.js';
import type { TestServer } from '../support/server.js';
import { type SpendStack, startSpendServer } from '../support/spend-server.js';
import { createWebhook, deliver } from '../support/webhooks.js';

// Spend caps for real: oz against a scripted model server whose every step costs 0.30 USD (100k input tokens at
// 3 USD per million), a run cap that it crosses at its second step, and team budgets that refuse new runs.
let stack: SpendStack;
let hangar: TestServer;
let anthropic: AnthropicServer;

before(async () => {
  stack = await startSpendServer({ HANGAR_RUN_MAX_COST_USD: '5', HANGAR_RUN_LEASE_SECONDS: '6' });
  ({ hangar, anthropic } = stack);
});
after(async () => {
  await stack?.stop();
});

test('a run that crosses its cap is stopped at that usage event and ends FAILED budget_exceeded', async () => {
  const step = { toolCalls: [{ name: 'search_files', input: { pattern: 'x' } }], usage: { input: 100_000, output: 0 } };
  anthropic.script(step, step, step, step, step, { text: 'done' });
  const created = await hangar.request('POST', '/agent/runs', {
    body: { prompt: 'spend', config: { model_id: 'sonnet-test', max_cost_usd: 0.5 } },
  });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  const run = await waitForState(hangar, created.body.run_id, 'SUCCEEDED', 'FAILED', 'ERROR');
  assert.equal(run.state, 'FAILED');
  assert.equal(run.status_message.error_code, 'budget_exceeded');
  assert.match(run.status_message.message, /spend cap of 0\.5 USD .* spent 0\.6000 USD/);
  // Stopped on the usage of the second step: the model was not asked for a third (or, at worst, the request in
  // flight when the stop landed).
  assert.ok(anthropic.requests.length <= 3, `${anthropic.requests.length} model requests`);
  assert.ok(run.request_usage.inference_cost >= 0.6);
});

test('a cap above the operator maximum is refused at creation', async () => {
  const response = await hangar.request('POST', '/agent/runs', {
    body: { prompt: 'p', config: { harness: { type: 'script' }, max_cost_usd: 6 } },
  });
  assert.equal(response.status, 400);
  assert.match(response.body.detail, /HANGAR_RUN_MAX_COST_USD/);
});

test("a team over its monthly budget is warned, then refused at creation, and its schedules record why they're skipped", async () => {
  const team = await hangar.createTeamWithUser();
  const asTeam = { apiKey: team.apiKey };
  const ended = async (runId: string) => {
    let run: any;
    await eventuallySignalled(`run ${runId} ends`, async () => {
      run = await getRun(hangar, runId, team.apiKey);
      return ['SUCCEEDED', 'FAILED', 'ERROR'].includes(run.state);
    });
    return run;
  };
  // Members cannot set budgets.
  assert.equal(
    (
      await hangar.request('PUT', `/api/v1/admin/teams/${team.teamUid}/budget`, {
        ...asTeam,
        body: { monthly_budget_usd: 1 },
      })
    ).status,
    403,
  );
  const set = await hangar.request('PUT', `/api/v1/admin/teams/${team.teamUid}/budget`, {
    body: { monthly_budget_usd: 0.015, warn_at_percent: 50 },
  });
  assert.equal(set.status, 200, JSON.stringify(set.body));
  assert.equal(set.body.status, 'ok');

  // One run costing 0.01 USD (the script harness's usage): past the warning threshold, under the budget.
  const first = await hangar.request('POST', '/agent/runs', {
    ...asTeam,
    body: { prompt: script({ usage: true }, { done: 'ok' }), config: { harness: { type: 'script' } } },
  });
  assert.equal(first.status, 200);
  assert.equal((await ended(first.body.run_id)).state, 'SUCCEEDED');
  const warned = await hangar.request('GET', '/api/v1/team/spend', asTeam);
  assert.equal(warned.status, 200);
  assert.equal(warned.body.month_spend_usd, 0.01);
  assert.equal(warned.body.monthly_budget_usd, 0.015);
  assert.equal(warned.body.status, 'warning');

  // A second one takes the team past the budget: new runs are refused with an actionable code.
  const second = await hangar.request('POST', '/agent/runs', {
    ...asTeam,
    body: { prompt: script({ usage: true }, { done: 'ok' }), config: { harness: { type: 'script' } } },
  });
  assert.equal(second.status, 200);
  await ended(second.body.run_id);
  const refused = await hangar.request('POST', '/agent/runs', { ...asTeam, body: { prompt: 'more' } });
  assert.equal(refused.status, 403);
  assert.equal(refused.body.error_code, 'budget_exceeded');
  assert.match(refused.body.detail, /0\.02 USD of its monthly budget of 0\.02 USD|monthly budget/);
  const shown = await hangar.request('GET', `/api/v1/admin/teams/${team.teamUid}/budget`);
  assert.equal(shown.body.status, 'exceeded');
  assert.equal(shown.body.month_spend_usd, 0.02);
  // Other teams are not affected.
  assert.equal((await hangar.request('GET', '/api/v1/team/spend')).body.status, 'none');

  // A schedule of the team is skipped, and its history says so.
  const schedule = await hangar.request('POST', '/agent/schedules', {
    ...asTeam,
    body: { name: 'tick', cron_schedule: '* * * * * *', prompt: 'tick', enabled: true },
  });
  assert.equal(schedule.status, 201, JSON.stringify(schedule.body));
  let item: any;
  await eventually('the schedule records the refusal', async () => {
    item = (await hangar.request('GET', `/agent/schedules/${schedule.body.id}`, asTeam)).body;
    return item.last_spawn_error !== null;
  });
  assert.match(item.last_spawn_error, /monthly budget/);

  // An automation of the team is skipped too: the delivery is evaluated, no run starts, and its firing says why.
  const hook = await createWebhook(hangar, { name: 'over-budget' }, team.apiKey);
  const automation = await hangar.request('POST', '/api/v1/factory/automations', {
    ...asTeam,
    body: {
      name: 'on-delivery',
      prompt: 'react',
      agent_config: { harness: { type: 'script' } },
      triggers: [{ provider: 'webhook', event: 'received', filter: { webhook_ids: [hook.uid] } }],
    },
  });
  assert.equal(automation.status, 201, JSON.stringify(automation.body));
  const delivered = await deliver(hook.url, '{"action":"opened"}', {
    authorization: `Bearer ${hook.secret}`,
    'x-service-delivery-id': 'over-budget-1',
  });
  assert.equal(delivered.status, 202, JSON.stringify(delivered.body));
  let delivery: any;
  await eventually('the delivery is evaluated', async () => {
    delivery = (await hangar.request('GET', `/api/v1/factory/webhooks/${hook.uid}/deliveries/over-budget-1`, asTeam))
      .body;
    return delivery.evaluated_at !== null;
  });
  assert.equal(delivery.runs.length, 1, JSON.stringify(delivery));
  assert.equal(delivery.runs[0].automation_id, automation.body.id);
  assert.equal(delivery.runs[0].run_id, null);
  assert.match(delivery.runs[0].error, /monthly budget/);

  // Raising the budget lets runs start again.
  await hangar.request('PUT', `/api/v1/admin/teams/${team.teamUid}/budget`, { body: { monthly_budget_usd: 10 } });
  const again = await hangar.request('POST', '/agent/runs', {
    ...asTeam,
    body: { prompt: script({ done: 'ok' }), config: { harness: { type: 'script' } } },
  });
  assert.equal(again.status, 200);
  await hangar.request('PUT', `/agent/schedules/${schedule.body.id}`, {
    ...asTeam,
    body: { name: 'tick', cron_schedule: '* * * * * *', prompt: 'tick', enabled: false },
  });
});

test('runs in flight count toward the month spend as their usage arrives, so they cannot overshoot the budget', async () => {
  const team = await hangar.createTeamWithUser();
  const asTeam = { apiKey: team.apiKey };
  await hangar.request('PUT', `/api/v1/admin/teams/${team.teamUid}/budget`, { body: { monthly_budget_usd: 0.015 } });
  // 0.02 USD of usage, then the run keeps going: it has not ended, yet what it spent counts now.
  const running = await hangar.request('POST', '/agent/runs', {
    ...asTeam,
    body: {
      prompt: script({ usage: true }, { usage: true }, { sleep: 60_000 }),
      config: { harness: { type: 'script' } },
    },
  });
  assert.equal(running.status, 200, JSON.stringify(running.body));
  let spend: any;
  await eventually('the running run spends the budget', async () => {
    spend = (await hangar.request('GET', '/api/v1/team/spend', asTeam)).body;
    return spend.status === 'exceeded';
  });
  assert.equal(spend.month_spend_usd, 0.02);
  assert.equal((await getRun(hangar, running.body.run_id, team.apiKey)).state, 'INPROGRESS');
  const refused = await hangar.request('POST', '/agent/runs', { ...asTeam, body: { prompt: 'more' } });
  assert.equal(refused.status, 403);
  assert.equal(refused.body.error_code, 'budget_exceeded');
  await hangar.request('POST', `/agent/runs/${running.body.run_id}/cancel`, asTeam);
});
