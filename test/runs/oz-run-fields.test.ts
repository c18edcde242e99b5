import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { hangarCli } from '../support/cli.js';
import { eventuallySignalled, getRun, script, waitForState } from '../support/engine.js';
import type { AnthropicServer } from '../support/model-servers/index.js';
import { createRun, setRunColumns } from '../support/runs.js';
import type { TestServer } from '../support/server.js';
import { type SpendStack, startSpendServer } from '../support/spend-server.js';
import { createWebhook, deliver } from '../support/webhooks.js';

// The run fields newer Oz clients read (issue 52, fields 4 and 5), over HTTP. The expected names, types and enum
// values were read from Oz's public API description and written here by hand: a run's finish time, the root of its
// tree, whether a debug agent may start, what triggered it, which automation and factory it came from, its error
// category, and its usage split by kind of token and by category and model. oz runs on a scripted model priced at
// 3 USD (input) and 15 USD (output) per million tokens.

let stack: SpendStack;
let hangar: TestServer;
let anthropic: AnthropicServer;

/** Runs that need no model: the script harness, told to do nothing but end. */
const SCRIPTED = { harness: { type: 'script' } };

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

before(async () => {
  stack = await startSpendServer();
  ({ hangar, anthropic } = stack);
});
after(async () => {
  await stack?.stop();
});

async function cli(...args: string[]): Promise<string> {
  const result = await hangarCli(args, { url: hangar.url, apiKey: hangar.apiKey });
  assert.equal(result.code, 0, `${args.join(' ')}: ${result.stderr}`);
  return result.stdout;
}

function near(actual: number, expected: number, what: string) {
  assert.ok(Math.abs(actual - expected) < 1e-9, `${what}: ${actual}, expected ${expected}`);
}

test('an ended oz run: finished_at, its own root, and request_usage split by kind of token, category and model', async () => {
  anthropic.script({ text: 'done', usage: { input: 100_000, output: 10_000 } });
  const runId = await createRun(hangar, { prompt: 'spend a little', config: { model_id: 'sonnet-test' } });
  const run = await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR');
  assert.equal(run.state, 'SUCCEEDED', JSON.stringify(run.status_message));
  assert.match(run.finished_at, RFC3339);
  assert.equal(run.root_run_id, runId);
  assert.equal(run.debug_agent_available, false);
  assert.equal(run.error_category, undefined);

  const usage = run.request_usage;
  assert.equal(usage.total_tokens, 110_000);
  assert.ok(Number.isInteger(usage.total_tokens));
  near(usage.inference_cost, 0.45, 'inference_cost');
  near(usage.inference_cost_usd, 0.45, 'inference_cost_usd');
  const breakdown = usage.inference_cost_breakdown_usd;
  assert.deepEqual(Object.keys(breakdown).sort(), [
    'input_cache_read_cost_usd',
    'input_cache_write_cost_usd',
    'input_cost_usd',
    'output_cost_usd',
  ]);
  for (const value of Object.values(breakdown)) assert.equal(typeof value, 'number');
  near(breakdown.input_cost_usd, 0.3, 'input_cost_usd');
  near(breakdown.output_cost_usd, 0.15, 'output_cost_usd');
  assert.equal(breakdown.input_cache_read_cost_usd, 0);
  assert.equal(breakdown.input_cache_write_cost_usd, 0);

  const category = usage.usage_by_category.primary_agent;
  assert.equal(typeof category.platform_usage_usd, 'number');
  assert.equal(category.byok_inference_usage, undefined);
  const model = category.direct_api_inference_usage['sonnet-test'];
  assert.deepEqual(model.token_count, { input: 100_000, input_cache_read: 0, input_cache_write: 0, output: 10_000 });
  near(model.cost_usd.input_cost_usd, 0.3, 'per-model input cost');
  assert.equal(typeof model.web_search_cost_usd, 'number');
  assert.ok(Number.isInteger(model.web_search_count));
  assert.deepEqual(usage.model_token_usage, [
    {
      model_id: 'sonnet-test',
      total_tokens: 110_000,
      usage_type: 'warp',
      tokens_by_category: { primary_agent: 110_000 },
    },
  ]);

  // The list item carries the same, from the same page query.
  const listed = await hangar.request('GET', `/agent/runs?q=${runId}`);
  assert.equal(listed.status, 200);
  const item = listed.body.runs.find((candidate: { run_id: string }) => candidate.run_id === runId);
  assert.deepEqual(item.request_usage, usage);
  assert.equal(item.finished_at, run.finished_at);
  assert.equal(item.root_run_id, runId);

  // `hangar runs get` says when it finished and what it used.
  const shown = await cli('runs', 'get', runId);
  assert.match(shown, /^Finished: +\d{4}-\d{2}-\d{2} /m);
  assert.match(shown, /^Usage: +110000 tokens, 0\.4500 USD \(input 0\.3000, output 0\.1500\)$/m);
});

test('a run still waiting has finished_at null; children name the root of their tree', async () => {
  const root = await createRun(hangar, { prompt: 'root', config: SCRIPTED });
  const child = await createRun(hangar, { prompt: 'child', parent_run_id: root, config: SCRIPTED });
  const grandchild = await createRun(hangar, { prompt: 'grandchild', parent_run_id: child, config: SCRIPTED });
  await setRunColumns(hangar, grandchild, { state: 'QUEUED' });
  const run = await getRun(hangar, grandchild);
  assert.equal(run.root_run_id, root);
  assert.equal(run.parent_run_id, child);
  assert.equal((await getRun(hangar, child)).root_run_id, root);
  const listed = await hangar.request('GET', `/agent/runs?ancestor_run_id=${root}`);
  for (const item of listed.body.runs) assert.equal(item.root_run_id, root);
  const waiting = await createRun(hangar, { prompt: 'wait', config: { worker_host: 'nobody-connects' } });
  const queued = await getRun(hangar, waiting);
  assert.equal(queued.state, 'QUEUED');
  assert.equal(queued.finished_at, null);
  assert.equal(queued.debug_agent_available, false);
});

test('a failed setup with its debug window open: debug_agent_available, status_message.debug_agent_active, error_category', async () => {
  const runId = await createRun(hangar, { prompt: 'p', config: { worker_host: 'nobody-connects' } });
  const until = new Date(Date.now() + 3_600_000).toISOString();
  await setRunColumns(hangar, runId, {
    state: 'FAILED',
    ended_at: new Date(),
    status_message: JSON.stringify({
      message: 'setup failed',
      error_code: 'environment_setup_failed',
      retryable: false,
      session_debug_until: until,
    }),
    debug_session: JSON.stringify({ owner: 'engine-x', workspace: '/nowhere', until }),
    sandbox_running: true,
  });
  const run = await getRun(hangar, runId);
  assert.equal(run.debug_agent_available, true);
  assert.equal(run.status_message.debug_agent_active, true);
  assert.equal(run.error_category, 'user');
  assert.match(run.finished_at, RFC3339);
  const shown = await cli('runs', 'get', runId);
  assert.match(shown, /^Error: +environment_setup_failed \(user error\)$/m);
  assert.match(shown, /^Debug agent: +working now in the kept workspace$/m);

  // The window closed: no debug agent, and no debug_agent_active.
  await setRunColumns(hangar, runId, {
    debug_session: JSON.stringify({ owner: 'engine-x', workspace: '/nowhere', until: new Date(1000).toISOString() }),
  });
  const closed = await getRun(hangar, runId);
  assert.equal(closed.debug_agent_available, false);
  assert.equal(closed.status_message.debug_agent_active, undefined);

  const errored = await createRun(hangar, { prompt: 'p', config: { worker_host: 'nobody-connects' } });
  await setRunColumns(hangar, errored, {
    state: 'ERROR',
    ended_at: new Date(),
    status_message: JSON.stringify({ message: 'boom', error_code: 'internal_error', retryable: true }),
  });
  assert.equal((await getRun(hangar, errored)).error_category, 'platform');
});

test('an automation run: trigger_url, automation_id and factory_uid, and the list filters on them (repeatable)', async () => {
  const hook = await createWebhook(hangar, { name: 'fields-hook', auth_mode: 'token' });
  const automations: Array<{ id: string; factory_uid: string }> = [];
  for (const name of ['fields-a', 'fields-b']) {
    const created = await hangar.request('POST', '/api/v1/factory/automations', {
      body: {
        name,
        prompt: script({ say: 'hi' }),
        agent_config: { harness: { type: 'script' } },
        triggers: [{ provider: 'webhook', event: 'received', filter: { webhook_ids: [hook.uid] } }],
      },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    automations.push(created.body);
  }
  const delivered = await deliver(hook.url, '{"n":1}', { Authorization: `Bearer ${hook.secret}` });
  assert.equal(delivered.status, 202);
  let runs: any[] = [];
  await eventuallySignalled('both automations started a run', async () => {
    const listed = await hangar.request(
      'GET',
      `/agent/runs?automation_id=${automations[0]!.id}&automation_id=${automations[1]!.id}`,
    );
    runs = listed.body.runs;
    return runs.length === 2;
  });
  for (const run of runs) {
    assert.equal(run.source, 'WEBHOOK');
    assert.ok(automations.some((automation) => automation.id === run.automation_id));
    assert.equal(run.factory_uid, automations[0]!.factory_uid);
    assert.equal(new URL(run.trigger_url).pathname, `/factory/webhooks/${hook.uid}`);
  }
  const one = await hangar.request('GET', `/agent/runs?automation_id=${automations[0]!.id}`);
  assert.deepEqual(
    one.body.runs.map((run: { automation_id: string }) => run.automation_id),
    [automations[0]!.id],
  );
  const byFactory = await hangar.request(
    'GET',
    `/agent/runs?factory_uid=${automations[0]!.factory_uid}&factory_uid=no-such-factory`,
  );
  assert.equal(byFactory.status, 200);
  assert.ok(byFactory.body.runs.length >= 2);
  for (const run of byFactory.body.runs) assert.equal(run.factory_uid, automations[0]!.factory_uid);
  const none = await hangar.request('GET', '/agent/runs?factory_uid=no-such-factory');
  assert.deepEqual(none.body.runs, []);

  // The CLI takes both filters, repeated, and shows where a run came from.
  const listed = await cli(
    'runs',
    'list',
    '--automation',
    automations[0]!.id,
    '--automation',
    automations[1]!.id,
    '--json',
  );
  assert.equal(JSON.parse(listed).runs.length, 2);
  const byCli = await cli('runs', 'list', '--factory', automations[0]!.factory_uid, '--json');
  assert.ok(JSON.parse(byCli).runs.length >= 2);
  const shown = await cli('runs', 'get', runs[0].run_id);
  assert.match(shown, new RegExp(`^Trigger: +http.*/factory/webhooks/${hook.uid}$`, 'm'));
  assert.match(shown, new RegExp(`^Automation: +${runs[0].automation_id}$`, 'm'));
});

test('q finds a run by its exact ID or its URL, whatever its title and prompt say', async () => {
  const runId = await createRun(hangar, { prompt: 'nothing in common', title: 'zzz', config: SCRIPTED });
  await createRun(hangar, { prompt: `mentions ${runId.slice(0, 8)} only`, title: 'other', config: SCRIPTED });
  const ids = async (q: string) =>
    (await hangar.request('GET', `/agent/runs?q=${encodeURIComponent(q)}`)).body.runs.map(
      (run: { run_id: string }) => run.run_id,
    );
  assert.deepEqual(await ids(runId), [runId]);
  assert.deepEqual(await ids(runId.toUpperCase()), [runId]);
  const link = (await getRun(hangar, runId)).session_link;
  assert.deepEqual(await ids(link), [runId]);
  assert.deepEqual(await ids(`http://proxy.example/runs/${runId}`), [runId]);
  // Another team's run is not found by its ID.
  const other = await hangar.createTeamWithUser();
  const theirs = await hangar.request('GET', `/agent/runs?q=${runId}`, { apiKey: other.apiKey });
  assert.deepEqual(theirs.body.runs, []);
});
