import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { eventually, eventuallySignalled, harnessEnv, outputTexts, waitForState } from '../support/engine.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { type CreatedWebhook, createWebhook, deliver } from '../support/webhooks.js';

const SCRIPT_HARNESS = fileURLToPath(new URL('../support/script-harness.mjs', import.meta.url));
// A harness that shows what a delivery's run gets: the files in its workspace, the payload file, the prompt.
const reader = {
  command: [process.execPath, SCRIPT_HARNESS],
  env: { SCRIPT_STEPS: JSON.stringify([{ ls: '.' }, { cat: 'event-payload.json' }, { prompt: true }]) },
};

let hangar: TestServer;
before(
  async () => (hangar = await startTestServer(harnessEnv({ reader }, { HANGAR_WEBHOOK_RATE_PER_MINUTE: '100000' }))),
);
after(() => hangar.stop());

const api = (method: string, path: string, options: { body?: unknown; apiKey?: string } = {}) =>
  hangar.request(method, `/api/v1${path}`, options);

async function createAutomation(body: Record<string, unknown>) {
  const response = await api('POST', '/factory/automations', {
    body: { agent_config: { harness: { type: 'reader' } }, ...body },
  });
  assert.equal(response.status, 201, JSON.stringify(response.body));
  return response.body;
}

async function send(hook: CreatedWebhook, payload: unknown, id: string) {
  const response = await deliver(hook.url, JSON.stringify(payload), {
    authorization: `Bearer ${hook.secret}`,
    'x-service-delivery-id': id,
  });
  assert.equal(response.status, 202, JSON.stringify(response.body));
}

/** Waits until the delivery was evaluated and returns what it started. */
async function firings(
  hook: CreatedWebhook,
  deliveryId: string,
): Promise<Array<{ automation_id: string; run_id: string | null; error: string | null }>> {
  let delivery: any;
  await eventually(`delivery ${deliveryId} evaluated`, async () => {
    delivery = (await api('GET', `/factory/webhooks/${hook.uid}/deliveries/${deliveryId}`)).body;
    return delivery.evaluated_at !== null;
  });
  return delivery.runs;
}

describe('automations', () => {
  test('a matching delivery starts one run: the prompt plus the envelope, the body as event-payload.json', async () => {
    const hook = await createWebhook(hangar, { name: 'issues' });
    const automation = await createAutomation({
      name: 'triage',
      prompt: 'Triage the new issue.',
      triggers: [
        {
          provider: 'webhook',
          event: 'received',
          filter: { webhook_ids: [hook.uid], payload: { action: ['opened', 'reopened'] } },
        },
      ],
    });
    assert.deepEqual(automation.webhooks, [{ uid: hook.uid, name: 'issues', state: 'enabled' }]);
    const raw = '{"action": "opened",  "issue": {"title": "Crash on start"}}';
    assert.equal(
      (await deliver(hook.url, raw, { authorization: `Bearer ${hook.secret}`, 'x-service-delivery-id': 'd-1' })).status,
      202,
    );
    const started = await firings(hook, 'd-1');
    assert.equal(started.length, 1);
    assert.equal(started[0]!.automation_id, automation.id);
    const runId = started[0]!.run_id!;
    const run = await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR');
    assert.equal(run.state, 'SUCCEEDED', JSON.stringify(run));
    assert.equal(run.source, 'WEBHOOK');
    assert.equal(run.title, 'triage');
    const [listing, payload, prompt] = await outputTexts(hangar, runId);
    assert.ok(JSON.parse(listing!).includes('event-payload.json'));
    assert.equal(payload, raw, 'the payload file holds the body byte for byte');
    assert.ok(prompt!.startsWith('Triage the new issue.'));
    assert.match(prompt!, new RegExp(`webhook "issues" \\(${hook.uid}\\), delivery ID d-1`));
    assert.match(prompt!, /untrusted/);

    // Not matching: accepted, logged, evaluated, nothing started.
    await send(hook, { action: 'closed' }, 'd-2');
    assert.deepEqual(await firings(hook, 'd-2'), []);
  });

  test('every enabled automation that selects the webhook and matches starts its own run; disabled ones do not', async () => {
    const hook = await createWebhook(hangar, { name: 'fanout' });
    const trigger = (payload?: unknown) => [
      { provider: 'webhook', event: 'received', filter: { webhook_ids: [hook.uid], ...(payload ? { payload } : {}) } },
    ];
    const all = await createAutomation({ name: 'fan-all', prompt: 'a', triggers: trigger() });
    const main = await createAutomation({
      name: 'fan-main',
      prompt: 'b',
      triggers: trigger({ ref: 'refs/heads/main' }),
    });
    await createAutomation({ name: 'fan-off', prompt: 'c', enabled: false, triggers: trigger() });
    await createAutomation({
      name: 'fan-other',
      prompt: 'd',
      triggers: trigger({ ref: { not_in: ['refs/heads/main'] } }),
    });
    await send(hook, { ref: 'refs/heads/main' }, 'push-1');
    const started = await firings(hook, 'push-1');
    assert.deepEqual(started.map((firing) => firing.automation_id).sort(), [all.id, main.id].sort());
    assert.ok(started.every((firing) => firing.run_id !== null && firing.error === null));
    // The duplicate of an accepted delivery starts nothing.
    await send(hook, { ref: 'refs/heads/main' }, 'push-1');
    const runs = await hangar.db
      .selectFrom('automation_firings')
      .select('run_id')
      .where('automation_id', 'in', [all.id, main.id])
      .execute();
    assert.equal(runs.length, 2);
  });

  test('deleting a webhook leaves its automations visible; its pending deliveries start nothing', async () => {
    const hook = await createWebhook(hangar, { name: 'doomed' });
    const automation = await createAutomation({
      name: 'orphan',
      prompt: 'x',
      triggers: [{ provider: 'webhook', event: 'received', filter: { webhook_ids: [hook.uid] } }],
    });
    assert.equal((await api('DELETE', `/factory/webhooks/${hook.uid}`)).status, 204);
    const read = await api('GET', `/factory/automations/${automation.id}`);
    assert.equal(read.status, 200);
    assert.deepEqual(read.body.webhooks, [{ uid: hook.uid, name: null, state: 'deleted' }]);
    assert.equal((await deliver(hook.url, '{}', { authorization: `Bearer ${hook.secret}` })).status, 404);
  });

  test('a run that cannot start is recorded with its reason, and other automations still fire', async () => {
    const hook = await createWebhook(hangar, { name: 'reasons' });
    const good = await createAutomation({
      name: 'reason-good',
      prompt: 'ok',
      triggers: [{ provider: 'webhook', event: 'received', filter: { webhook_ids: [hook.uid] } }],
    });
    const bad = await createAutomation({
      name: 'reason-bad',
      prompt: 'bad',
      agent_config: { harness: { type: 'no-such-harness' } },
      triggers: [{ provider: 'webhook', event: 'received', filter: { webhook_ids: [hook.uid] } }],
    });
    await send(hook, { x: 1 }, 'r-1');
    const started = await firings(hook, 'r-1');
    assert.ok(started.find((firing) => firing.automation_id === good.id)!.run_id);
    const failed = started.find((firing) => firing.automation_id === bad.id)!;
    assert.equal(failed.run_id, null);
    assert.match(failed.error!, /no-such-harness/);
  });

  test('validation: unknown webhook UIDs, bad filters, bad cron, missing triggers are 400 with the reason', async () => {
    const hook = await createWebhook(hangar, { name: 'validation' });
    const attempt = async (body: Record<string, unknown>) =>
      api('POST', '/factory/automations', { body: { name: 'v', prompt: 'p', ...body } });
    const unknown = await attempt({
      triggers: [{ provider: 'webhook', event: 'received', filter: { webhook_ids: ['validation'] } }],
    });
    assert.equal(unknown.status, 400);
    assert.match(unknown.body.detail, /UIDs, not names/);
    const contradictory = await attempt({
      triggers: [
        {
          provider: 'webhook',
          event: 'received',
          filter: { webhook_ids: [hook.uid], payload: { a: { in: [1], not_in: [1] } } },
        },
      ],
    });
    assert.equal(contradictory.status, 400);
    assert.match(contradictory.body.detail, /triggers\[0\]\.filter: payload\.a/);
    const cron = await attempt({
      triggers: [{ provider: 'schedule', event: 'cron_fired', schedule: { cron: '61 * * * *' } }],
    });
    assert.equal(cron.status, 400);
    assert.match(cron.body.detail, /triggers\[0\]\.schedule\.cron/);
    assert.equal((await attempt({ triggers: [] })).status, 400);
    assert.equal((await attempt({})).status, 400);
    assert.equal(
      (await attempt({ triggers: [{ provider: 'webhook', event: 'sent', filter: { webhook_ids: [hook.uid] } }] }))
        .status,
      400,
    );
    const member = await hangar.addUser(hangar.teamUid, 'member');
    const forbidden = await api('POST', '/factory/automations', {
      apiKey: member.apiKey,
      body: {
        name: 'm',
        prompt: 'p',
        triggers: [{ provider: 'webhook', event: 'received', filter: { webhook_ids: [hook.uid] } }],
      },
    });
    assert.equal(forbidden.status, 403);
  });

  test('test-filter reports the webhook check and the payload check against a stored delivery', async () => {
    const hook = await createWebhook(hangar, { name: 'tester' });
    await send(hook, { action: 'opened', labels: ['bug', 'p1'] }, 't-1');
    const check = (filter: Record<string, unknown>) =>
      api('POST', '/factory/automations/test-filter', { body: { webhook_uid: hook.uid, delivery_id: 't-1', filter } });
    const yes = await check({ webhook_ids: [hook.uid], payload: { labels: { in: ['p1'] } } });
    assert.equal(yes.status, 200, JSON.stringify(yes.body));
    assert.equal(yes.body.would_trigger, true);
    assert.equal(yes.body.webhook_check.passed, true);
    assert.equal(yes.body.payload_check.passed, true);
    const no = await check({ webhook_ids: [hook.uid], payload: { action: 'closed' } });
    assert.equal(no.body.would_trigger, false);
    assert.equal(no.body.payload_check.passed, false);
    assert.match(no.body.payload_check.detail, /payload\.action/);
    const elsewhere = await check({ webhook_ids: ['AAAAAAAAAAAAAAAAAAAAAA'] });
    assert.equal(elsewhere.body.would_trigger, false);
    assert.equal(elsewhere.body.webhook_check.passed, false);
    const saved = await createAutomation({
      name: 'saved-filter',
      prompt: 'p',
      enabled: false,
      triggers: [
        { provider: 'webhook', event: 'received', filter: { webhook_ids: [hook.uid], payload: { action: 'opened' } } },
      ],
    });
    const bySaved = await api('POST', '/factory/automations/test-filter', {
      body: { webhook_uid: hook.uid, delivery_id: 't-1', automation_id: saved.id },
    });
    assert.equal(bySaved.body.would_trigger, true);
    const missing = await api('POST', '/factory/automations/test-filter', {
      body: { webhook_uid: hook.uid, delivery_id: 'nope', filter: { webhook_ids: [hook.uid] } },
    });
    assert.equal(missing.status, 404);
  });

  test('cron triggers fire through the scheduler and show the next run; update and delete change them', async () => {
    const automation = await createAutomation({
      name: 'nightly',
      prompt: 'Nightly sweep.',
      triggers: [{ provider: 'schedule', event: 'cron_fired', schedule: { cron: '* * * * * *' } }],
    });
    assert.ok(automation.schedule.next_run);
    // The automation's schedule is not one of the schedules API's.
    assert.ok(
      !(await api('GET', '/agent/schedules')).body.schedules.some((item: { name: string }) => item.name === 'nightly'),
    );
    let runId: string | undefined;
    await eventuallySignalled('a scheduled run of the automation', async () => {
      const runs = await api('GET', '/agent/runs?source=SCHEDULED_AGENT&limit=50');
      runId = runs.body.runs.find((run: { title: string }) => run.title === 'nightly')?.run_id;
      return runId !== undefined;
    });
    const paused = await api('PUT', `/factory/automations/${automation.id}`, { body: { enabled: false } });
    assert.equal(paused.status, 200);
    assert.equal(paused.body.schedule.next_run, null);
    assert.equal((await api('DELETE', `/factory/automations/${automation.id}`)).status, 204);
    assert.equal((await api('GET', `/factory/automations/${automation.id}`)).status, 404);
    assert.equal(
      await hangar.db
        .selectFrom('schedules')
        .select('id')
        .where('automation_id', '=', automation.id)
        .executeTakeFirst(),
      undefined,
    );
  });

  test("another team cannot see or test this team's automations", async () => {
    const hook = await createWebhook(hangar, { name: 'private-hook' });
    const automation = await createAutomation({
      name: 'private-automation',
      prompt: 'p',
      triggers: [{ provider: 'webhook', event: 'received', filter: { webhook_ids: [hook.uid] } }],
    });
    const other = await hangar.createTeamWithUser();
    assert.equal((await api('GET', `/factory/automations/${automation.id}`, { apiKey: other.apiKey })).status, 404);
    assert.deepEqual((await api('GET', '/factory/automations', { apiKey: other.apiKey })).body.automations, []);
    // Another team cannot point an automation at this team's webhook.
    const stolen = await api('POST', '/factory/automations', {
      apiKey: other.apiKey,
      body: {
        name: 's',
        prompt: 'p',
        triggers: [{ provider: 'webhook', event: 'received', filter: { webhook_ids: [hook.uid] } }],
      },
    });
    assert.equal(stolen.status, 400);
  });
});
