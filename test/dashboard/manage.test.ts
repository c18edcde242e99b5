// The dashboard's management pages in a real headless Chromium against a real Hangar: schedules, webhooks with
// their delivery log, automations and the test-filter action, environments, agent identities, models, workers.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import {
  acceptNextDialog,
  browserMissing,
  type DashboardSession,
  dashboardSession,
  screenshot,
} from '../support/browser.js';
import { eventually, harnessEnv, script, waitForState } from '../support/engine.js';
import type { TestServer } from '../support/server.js';

describe('dashboard: management pages', { skip: browserMissing }, () => {
  let session: DashboardSession;
  let hangar: TestServer;
  let page: Page;
  let problems: string[];

  before(async () => {
    session = await dashboardSession(harnessEnv(), { signIn: true });
    ({ hangar, page, problems } = session);
  });
  after(() => session?.close());

  const nav = (name: string) =>
    page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true }).click();
  const schedules = async () => (await hangar.request('GET', '/api/v1/agent/schedules')).body.schedules;

  test('schedules: create, edit, pause, resume and delete', async () => {
    await nav('Schedules');
    await page.getByText('No schedules yet.').waitFor();
    await page.getByRole('button', { name: 'New schedule' }).click();
    const form = page.getByRole('form', { name: 'New schedule' });
    await form.getByLabel('Name').fill('Nightly triage');
    await form.getByLabel('Cron schedule (UTC)').fill('0 3 * * *');
    await form.getByLabel('Prompt').fill('Triage new issues');
    await form.getByRole('button', { name: 'Create schedule' }).click();

    const card = page.getByRole('listitem').filter({ has: page.getByRole('heading', { name: 'Nightly triage' }) });
    await card.getByText('Active', { exact: true }).waitFor();
    const [created] = await schedules();
    assert.equal(created.cron_schedule, '0 3 * * *');
    assert.equal(await card.locator('time').first().getAttribute('datetime'), created.history.next_run);

    // A bad cron expression is refused with the API's reason.
    await card.getByRole('button', { name: 'Edit Nightly triage' }).click();
    const edit = page.getByRole('form', { name: 'Edit Nightly triage' });
    await edit.getByLabel('Cron schedule (UTC)').fill('every night');
    await edit.getByRole('button', { name: 'Save changes' }).click();
    await edit.getByRole('alert').getByText('Could not save the schedule').waitFor();
    await edit.getByLabel('Cron schedule (UTC)').fill('0 4 * * *');
    await edit.getByRole('button', { name: 'Save changes' }).click();
    await card.getByText('0 4 * * *', { exact: true }).waitFor();
    assert.equal((await schedules())[0].cron_schedule, '0 4 * * *');

    await card.getByRole('button', { name: 'Pause Nightly triage' }).click();
    await card.getByText('Paused', { exact: true }).waitFor();
    assert.equal((await schedules())[0].enabled, false);
    await screenshot(page, 'schedules');
    await card.getByRole('button', { name: 'Resume Nightly triage' }).click();
    await card.getByText('Active', { exact: true }).waitFor();
    assert.equal((await schedules())[0].enabled, true);

    acceptNextDialog(page);
    await card.getByRole('button', { name: 'Delete Nightly triage' }).click();
    await page.getByText('No schedules yet.').waitFor();
    assert.deepEqual(await schedules(), []);
  });

  test('webhooks and automations: the secret once, deliveries, the runs they started, test-filter, disable, rotate, delete', async () => {
    await nav('Webhooks');
    await page.getByText('No webhooks yet.').waitFor();
    await page.getByRole('button', { name: 'New webhook' }).click();
    await page.getByRole('form', { name: 'New webhook' }).getByLabel('Name').fill('issues');
    await page.getByRole('button', { name: 'Create webhook' }).click();
    const secret = await page.getByRole('textbox', { name: 'Secret of issues' }).inputValue();
    assert.ok(secret.length >= 32);
    const [webhook] = (await hangar.request('GET', '/api/v1/factory/webhooks')).body.webhooks;
    assert.equal(webhook.secret, undefined, 'the secret is shown once, by the create answer');
    await page.getByRole('button', { name: 'Done' }).click();
    assert.equal(await page.getByRole('textbox', { name: 'Secret of issues' }).count(), 0);

    // An automation that answers opened issues.
    await nav('Automations');
    await page.getByText('No automations yet.').waitFor();
    await page.getByRole('button', { name: 'New automation' }).click();
    const form = page.getByRole('form', { name: 'New automation' });
    await form.getByLabel('Name').fill('triage');
    await form.getByLabel('Prompt').fill(script({ say: 'Triaged.' }));
    await form.getByRole('checkbox', { name: 'issues' }).check();
    await form.getByLabel('Payload filter (JSON, optional: every delivery otherwise)').fill('{"action": ["opened"]}');
    await form.getByRole('button', { name: 'Create automation' }).click();
    const automation = page.getByRole('listitem').filter({ has: page.getByRole('heading', { name: 'triage' }) });
    await automation.getByRole('link', { name: 'issues' }).waitFor();

    let sent = 0;
    const deliver = (body: unknown, key = secret) =>
      fetch(webhook.url, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          'x-service-delivery-id': `delivery-${++sent}`,
        },
        body: JSON.stringify(body),
      });
    const accepted = await deliver({ action: 'opened', issue: { number: 7 } });
    assert.equal(accepted.status, 202);
    const { delivery_id: deliveryId } = (await accepted.json()) as { delivery_id: string };

    // The test-filter action, from the automations page.
    const tester = page.getByRole('form', { name: 'Test a filter' });
    await page.reload();
    await tester.getByLabel('Delivery').selectOption(deliveryId);
    await tester.getByLabel('Payload filter (JSON)').fill('{"action": ["closed"]}');
    await tester.getByRole('button', { name: 'Test filter' }).click();
    await tester.getByText('Would not start a run.').waitFor();
    assert.match(await tester.getByRole('status').innerText(), /action/);
    await tester.getByRole('radio', { name: 'A saved automation' }).check();
    await tester.getByRole('combobox', { name: /^Automation/ }).selectOption({ label: 'triage' });
    await tester.getByRole('button', { name: 'Test filter' }).click();
    await tester.getByText('Would start a run.').waitFor();
    await screenshot(page, 'automations');

    // The delivery log: the delivery, its payload and the run the automation started.
    await nav('Webhooks');
    await page.getByRole('link', { name: 'issues' }).click();
    await page.getByRole('heading', { level: 1, name: 'issues' }).waitFor();
    await page.getByRole('button', { name: deliveryId }).click();
    const details = page.getByRole('region', { name: `Delivery ${deliveryId}` });
    await details.getByRole('link', { name: /^run / }).waitFor();
    assert.deepEqual(JSON.parse(await details.getByLabel('Payload', { exact: true }).innerText()), {
      action: 'opened',
      issue: { number: 7 },
    });
    const runLink = await details.getByRole('link', { name: /^run / }).getAttribute('href');
    const runId = decodeURIComponent(runLink!.split('/').pop()!);
    await waitForState(hangar, runId, 'SUCCEEDED');
    // Test a filter against this very delivery.
    await details.getByLabel('Payload filter (JSON)').fill('{"issue": {"number": 7}}');
    await details.getByRole('button', { name: 'Test filter' }).click();
    await details.getByText('Would start a run.').waitFor();
    await screenshot(page, 'webhook');

    // Disable: senders get 404. Enable again.
    await page.getByRole('button', { name: 'Disable' }).click();
    await page.getByRole('button', { name: 'Enable' }).waitFor();
    assert.equal((await deliver({ action: 'opened', issue: { number: 8 } })).status, 404);
    await page.getByRole('button', { name: 'Enable' }).click();
    await page.getByRole('button', { name: 'Disable' }).waitFor();

    // Rotate: a new secret, shown once; the old one fails.
    acceptNextDialog(page);
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    const rotated = await page.getByRole('textbox', { name: 'New secret' }).inputValue();
    assert.notEqual(rotated, secret);
    assert.equal((await deliver({ action: 'opened', issue: { number: 9 } })).status, 401);
    assert.equal((await deliver({ action: 'opened', issue: { number: 10 } }, rotated)).status, 202);
    await page.getByRole('button', { name: 'Done' }).click();

    // The log shows the new deliveries, accepted and refused.
    await page.getByRole('button', { name: 'Refresh the delivery log' }).click();
    await page.getByText('Rejected (auth)').waitFor();
    await nav('Webhooks');
    await page.getByRole('row').filter({ hasText: 'issues' }).getByText('Enabled', { exact: true }).waitFor();
    await screenshot(page, 'webhooks');

    await page.getByRole('link', { name: 'issues' }).click();
    acceptNextDialog(page);
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.getByText('No webhooks yet.').waitFor();
    assert.equal((await deliver({ action: 'opened' }, rotated)).status, 404);
    await nav('Automations');
    await automation.getByText(`deleted webhook ${webhook.uid}`).waitFor();
  });

  test('environments: create one and see it listed', async () => {
    await nav('Environments');
    await page.getByText('No environments yet.').waitFor();
    await page.getByRole('button', { name: 'New environment' }).click();
    const form = page.getByRole('form', { name: 'New environment' });
    await form.getByLabel('Name').fill('Backend');
    await form.getByLabel('Docker image').fill('node:20');
    await form.getByLabel(/Setup commands/).fill('npm ci');
    await form.getByRole('button', { name: 'Create environment' }).click();
    const card = page.getByRole('listitem').filter({ has: page.getByRole('heading', { name: 'Backend' }) });
    await card.getByText('node:20').waitFor();
    await card.getByText('npm ci').waitFor();
    await screenshot(page, 'environments');
  });

  test('agent identities: create one and see it available', async () => {
    await nav('Agents');
    await page.getByText('No agent identities yet.').waitFor();
    await page.getByRole('button', { name: 'New agent identity' }).click();
    const form = page.getByRole('form', { name: 'New agent identity' });
    await form.getByLabel('Name').fill('Release bot');
    await form.getByLabel('Base model').fill('claude-sonnet-4');
    await form.getByRole('button', { name: 'Create agent identity' }).click();
    const row = page.getByRole('row').filter({ hasText: 'Release bot' });
    await row.getByText('Available', { exact: true }).waitFor();
    await row.getByText('claude-sonnet-4', { exact: true }).waitFor();
    await screenshot(page, 'agents');
  });

  test('runners: create one, make it an agent default, delete it', async () => {
    await nav('Runners');
    await page.getByText('No runners yet.').waitFor();
    await page.getByText(/Without one: bwrap|Without one: process/).waitFor();
    await page.getByRole('button', { name: 'New runner' }).click();
    const form = page.getByRole('form', { name: 'New runner' });
    await form.getByLabel('Name').fill('Tiny');
    await form.getByLabel('CPUs').fill('100000');
    await form.getByRole('button', { name: 'Create runner' }).click();
    await form.getByRole('alert').getByText('Could not create the runner').waitFor();
    await form.getByLabel('CPUs').fill('0.5');
    await form.getByLabel('Memory').fill('256m');
    await form.getByRole('button', { name: 'Create runner' }).click();
    const row = page.getByRole('row').filter({ hasText: 'Tiny' });
    await row.getByText('0.5 CPUs, 256m', { exact: true }).waitFor();
    const [runner] = (await hangar.request('GET', '/api/v1/runners')).body.runners;
    assert.deepEqual(runner.limits, { cpus: 0.5, memory: '256m' });

    await nav('Agents');
    await page.getByRole('button', { name: 'New agent identity' }).click();
    const agentForm = page.getByRole('form', { name: 'New agent identity' });
    await agentForm.getByLabel('Name').fill('Shaped bot');
    await agentForm.getByLabel('Default runner').selectOption({ label: 'Tiny' });
    await agentForm.getByRole('button', { name: 'Create agent identity' }).click();
    await page.getByRole('row').filter({ hasText: 'Shaped bot' }).getByText('Tiny', { exact: true }).waitFor();
    const agents = (await hangar.request('GET', '/api/v1/agent/identities')).body.agents;
    assert.equal(agents.find((agent: { name: string }) => agent.name === 'Shaped bot').default_runner_uid, runner.uid);
    await screenshot(page, 'runners');

    await nav('Runners');
    acceptNextDialog(page);
    await row.getByRole('button', { name: 'Delete Tiny' }).click();
    await page.getByText('No runners yet.').waitFor();
  });

  test('models: the catalogue with costs, and why a model cannot be used', async () => {
    await nav('Models');
    const row = page.getByRole('row', { name: /Claude Sonnet 4/ });
    await row.waitFor();
    await row.getByText('$3.00').waitFor();
    await row.getByText(/No credentials for ANTHROPIC: set ANTHROPIC_API_KEY/).waitFor();
    await screenshot(page, 'models');
  });

  test('workers: none connected, and how to connect one', async () => {
    await nav('Workers');
    await page.getByText('No worker is connected.').waitFor();
    await page.getByText(/hangar worker --server/).waitFor();
    await screenshot(page, 'workers');
  });

  test('a deep link opens its page directly, and an unknown one says so', async () => {
    await page.goto('/factory/automations');
    await page.getByRole('heading', { level: 1, name: 'Automations' }).waitFor();
    await page.goto('/no/such/page');
    await page.getByRole('heading', { level: 1, name: 'Page not found' }).waitFor();
    await eventually('the page title', async () => (await page.title()) === 'Page not found · Hangar');
  });

  test('the pages showed no errors of their own', () => {
    assert.deepEqual(problems, []);
  });
});
