// The overview (landing page), a failed run's page, the environments' last run, the waiting banners, the status
// page and the API reference's branding, in a real headless Chromium against a real Hangar whose runs execute.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import {
  browserMissing,
  type DashboardSession,
  dashboardSession,
  openPage,
  screenshot,
  signIn,
} from '../support/browser.js';
import { eventuallySignalled, getRun, harnessEnv, script, waitForState } from '../support/engine.js';
import { startTestServer, type TestServer } from '../support/server.js';

describe('dashboard: overview and run pages', { skip: browserMissing }, () => {
  let session: DashboardSession;
  let hangar: TestServer;
  let browser: Browser;
  let page: Page;
  let problems: string[];

  before(async () => {
    session = await dashboardSession(harnessEnv());
    ({ hangar, browser, page, problems } = session);
  });
  after(() => session?.close());

  const create = async (body: Record<string, unknown>) => {
    const response = await hangar.request('POST', '/api/v1/agent/runs', { body });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return response.body.run_id as string;
  };
  const summary = () => page.getByRole('region', { name: 'Summary' });

  test('the overview is the landing page: the figures and charts of the last 24 hours and 7 days', async () => {
    const done = await create({
      title: 'Tidy the imports',
      prompt: script({ usage: true }, { done: 'ok' }),
      config: { model_id: 'claude-sonnet-4' },
    });
    const failed = await create({
      title: 'Fix the login test',
      prompt: script({ emit: { type: 'failed', message: 'The tests fail', error_code: 'tests_failed' } }),
    });
    await create({ title: 'Waits for its worker', prompt: 'wait', config: { worker_host: 'absent-box' } });
    await waitForState(hangar, done, 'SUCCEEDED');
    await waitForState(hangar, failed, 'FAILED');

    await signIn(page, hangar.apiKey);
    const now = page.getByRole('region', { name: 'Now' });
    await now.getByText('Waiting now').waitFor();
    assert.match(await now.innerText(), /Waiting now\s+1\s+1 queued/);
    assert.match(await now.innerText(), /Spend\s+\$0\.01\b/);
    assert.match(await now.innerText(), /3 runs created/);

    const chart = (name: string) => page.getByRole('figure', { name });
    // Each chart draws (an SVG) and says its figures in words.
    await chart('Runs per hour, by state').locator('svg.recharts-surface').first().waitFor();
    assert.match(await chart('Runs per hour, by state').innerText(), /3 runs created: 1 queued, 1 succeeded, 1 failed/);
    await chart('Queue depth').locator('svg.recharts-surface').first().waitFor();
    assert.match(await chart('Queue depth').innerText(), /1 runs wait now/);
    await chart('Failures by error code').locator('svg.recharts-surface').first().waitFor();
    assert.match(await chart('Failures by error code').innerText(), /tests_failed: 1/);
    await chart('Spend per day, by model').locator('svg.recharts-surface').first().waitFor();
    assert.match(await chart('Spend per day, by model').innerText(), /claude-sonnet-4 \$0\.01\b/);
    await page.getByRole('region', { name: 'Busiest schedules' }).getByText('No scheduled runs').waitFor();
    await screenshot(page, 'overview');

    await page.getByRole('button', { name: 'Last 7 days' }).click();
    assert.equal(await page.getByRole('button', { name: 'Last 7 days' }).getAttribute('aria-pressed'), 'true');
    await chart('Runs per hour, by state')
      .getByText(/3 runs created/)
      .waitFor();
    await screenshot(page, 'overview-7d');

    // The runs list: sources in words and a failure-reason column.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Runs' }).click();
    const row = page.getByRole('row').filter({ hasText: 'Fix the login test' });
    const reason = row.getByRole('cell').filter({ hasText: 'The tests fail' });
    await reason.waitFor();
    assert.equal(await reason.locator('span').getAttribute('title'), 'tests_failed: The tests fail');
    assert.equal(
      await page.getByRole('row').filter({ hasText: 'Tidy the imports' }).getByRole('cell', { name: '—' }).count(),
      1,
    );
    await page.getByText('More filters').click();
    assert.equal(await page.getByLabel('Source').locator('option[value="SCHEDULED_AGENT"]').innerText(), 'Schedule');
    await page.getByLabel('Source').selectOption({ label: 'Schedule' });
    await page.waitForURL(/source=SCHEDULED_AGENT/);
    await page.getByText('No run matches these filters.').waitFor();
  });

  test("a failed setup's run page: the failing command's output beside the error, no transcript, the environment by name", async () => {
    const environment = await hangar.request('POST', '/api/v1/environments', {
      body: {
        name: 'Billing service',
        setup_commands: ['echo "npm ERR! missing script: build" >&2; echo "see the log" >&2; exit 3'],
      },
    });
    assert.equal(environment.status, 201, JSON.stringify(environment.body));
    const envId = environment.body.uid as string;
    const runId = await create({
      title: 'Build the billing service',
      prompt: script({ done: 'never reached' }),
      config: { environment_id: envId },
      metadata: { ticket: 'BILL-7' },
    });
    await eventuallySignalled('the run to fail', async () =>
      ['FAILED', 'ERROR'].includes((await getRun(hangar, runId)).state),
    );

    await page.goto(`/runs/${runId}`);
    await summary().getByText('The run has ended').waitFor();
    const output = summary().getByRole('region', { name: 'Failure output' });
    await output.waitFor();
    assert.match(await output.innerText(), /npm ERR! missing script: build\nsee the log/);
    assert.match(await summary().innerText(), /Last 2 lines of exit 3|Last 2 lines of echo/);
    // The environment by name, linked to its runs; its ID in the tooltip.
    const environmentLink = summary().getByRole('link', { name: 'Billing service' });
    await environmentLink.waitFor();
    assert.equal(await environmentLink.getAttribute('href'), `/runs?environment_id=${envId}`);
    // Metadata apart from the run's own fields.
    const metadata = summary().getByRole('region', { name: 'Metadata' });
    assert.match(await metadata.innerText(), /ticket\s+BILL-7/);
    assert.doesNotMatch(await summary().locator('dl.facts').first().innerText(), /BILL-7/);
    // Nothing was said and nothing written: no "has not said anything yet", no transcript to download.
    await page.getByText('The agent said nothing in this run.').waitFor();
    assert.equal(await page.getByText('The agent has not said anything yet.').count(), 0);
    assert.equal(await page.getByRole('button', { name: 'Download transcript' }).count(), 0);
    const timeline = page.getByRole('region', { name: 'Timeline' });
    const stepFailed = timeline.getByText('Setup step failed', { exact: true });
    await stepFailed.waitFor();
    assert.equal(await stepFailed.getAttribute('title'), 'API event: environment_setup_step_failed');
    await screenshot(page, 'run-failed');

    // The environment had a run, though none started: its last run is not "never".
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Environments' }).click();
    const card = page.getByRole('listitem').filter({ has: page.getByRole('heading', { name: 'Billing service' }) });
    await card.getByText('(none has started)').waitFor();
    assert.equal(await card.locator('dd').filter({ hasText: 'none has started' }).getByText('never').count(), 0);
  });

  test("a waiting run's page says why it waits, as the API does", async () => {
    const runId = await create({ title: 'Waits again', prompt: 'wait', config: { worker_host: 'absent-box' } });
    const run = await getRun(hangar, runId);
    await page.goto(`/runs/${runId}`);
    await summary().getByText('Queued', { exact: true }).waitFor();
    const why = summary().getByText('Why it waits:');
    if (run.queue_reason) {
      await why.waitFor();
      assert.match(
        await summary().innerText(),
        new RegExp(run.queue_reason.message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')),
      );
    } else {
      // A server that does not explain waits yet: no banner made up by the page.
      assert.equal(await why.count(), 0);
    }
  });

  test('a banner on the overview and the runs list when runs wait because no harness can run them', async () => {
    // No operator file and no model key: nothing can run the default harness.
    const bare = await startTestServer({ HANGAR_CONFIG: '', ANTHROPIC_API_KEY: '', OPENAI_API_KEY: '' });
    const other = await openPage(browser, bare.url);
    try {
      const created = await bare.request('POST', '/api/v1/agent/runs', { body: { prompt: 'hello' } });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      const run = await getRun(bare, created.body.run_id);
      await signIn(other.page, bare.apiKey);
      const banner = other.page.getByRole('alert').filter({ hasText: 'because no harness can run' });
      if (run.queue_reason?.code === 'no_harness') {
        await banner.getByText(run.queue_reason.message).waitFor();
        await screenshot(other.page, 'overview-no-harness');
        await other.page.getByRole('link', { name: 'See the waiting runs' }).click();
        await other.page.getByRole('heading', { level: 1, name: 'Runs' }).waitFor();
        await banner.waitFor();
      } else {
        // A server that does not explain waits yet: the page makes up no reason.
        await other.page.getByRole('figure', { name: 'Queue depth' }).waitFor();
        assert.equal(await banner.count(), 0);
      }
      assert.deepEqual(other.problems, []);
    } finally {
      await other.context.close();
      await bare.stop();
    }
  });

  test("the status page shows the instance administrator what the API reports, and is in no one else's menu", async () => {
    // A team admin who is not an instance administrator: the route answers 403, so the menu has no Status.
    const member = await hangar.addUser(hangar.teamUid, 'admin');
    const other = await openPage(browser, hangar.url);
    try {
      // The menu asks once whether the key is an administrator's: the answer is awaited before looking.
      const asked = other.page.waitForResponse((response) => response.url().endsWith('/api/v1/admin/teams'));
      await signIn(other.page, member.apiKey);
      assert.equal((await asked).status(), 403);
      const menu = other.page.getByRole('navigation', { name: 'Main' });
      await menu.getByRole('link', { name: 'Automations' }).waitFor();
      assert.equal(await menu.getByRole('link', { name: 'Status' }).count(), 0);
      assert.deepEqual(other.problems, []);
    } finally {
      await other.context.close();
    }

    const status = await hangar.request('GET', '/api/v1/admin/status');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Status' }).click();
    await page.getByRole('heading', { level: 1, name: 'Status' }).waitFor();
    if (status.status === 200) {
      const checks = page.getByRole('region', { name: 'Checks' });
      for (const check of status.body.checks) await checks.getByText(check.name, { exact: true }).waitFor();
      // A harness runs prompts but no model has a key: a warning, never a green pass (issue 48 item 4.9).
      assert.equal(status.body.checks.find((check: any) => check.name === 'model keys')?.warning, true);
      const keys = checks.getByRole('listitem').filter({ hasText: 'model keys' });
      await keys.getByText('Warning', { exact: true }).waitFor();
      assert.equal(await keys.getByText('OK', { exact: true }).count(), 0);
      await screenshot(page, 'status');
    } else {
      await page.getByRole('alert').getByText('Could not load the status').waitFor();
    }
  });

  test('the API reference is branded Hangar', async () => {
    const docs = await openPage(browser, hangar.url);
    await docs.page.goto('/docs');
    await docs.page
      .getByRole('heading', { name: /Hangar API/ })
      .first()
      .waitFor();
    assert.equal(await docs.page.title(), 'Hangar API reference');
    const logo = docs.page.locator('.topbar img').first();
    await logo.waitFor();
    assert.match((await logo.getAttribute('src')) ?? '', /^data:image\/svg\+xml;base64,/);
    const svg = Buffer.from((await logo.getAttribute('src'))!.split(',')[1]!, 'base64').toString('utf8');
    assert.match(svg, /Hangar API/);
    assert.deepEqual(docs.problems, []);
    await docs.context.close();
  });

  test('the pages showed no errors of their own', () => {
    assert.deepEqual(problems, []);
  });
});
