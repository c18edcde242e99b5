// The dashboard's runs pages in a real headless Chromium against a real Hangar whose runs execute (script harness).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import {
  acceptNextDialog,
  browserMissing,
  type DashboardSession,
  dashboardSession,
  openPage,
  screenshot,
  signIn,
} from '../support/browser.js';
import { eventually, getRun, harnessEnv, script, waitForState } from '../support/engine.js';
import type { TestServer } from '../support/server.js';

describe('dashboard: runs', { skip: browserMissing }, () => {
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

  const summary = () => page.getByRole('region', { name: 'Summary' });
  const conversation = () => page.getByRole('region', { name: 'Conversation' });

  test('signing in checks the API key, and signing out forgets it', async () => {
    await page.goto('/');
    await page.getByRole('heading', { level: 1, name: 'Hangar' }).waitFor();
    await screenshot(page, 'sign-in');

    await page.getByLabel('API key').fill('hgr_not-a-key-of-this-server');
    await page.getByRole('button', { name: 'Sign in' }).click();
    const refused = page.getByRole('alert');
    await refused.getByText('Could not sign in').waitFor();
    assert.match(await refused.innerText(), /authentication_required/);

    await signIn(page, hangar.apiKey);
    await page.getByText('No runs in this period.').waitFor();
    // The key stays for the tab: a reload keeps the session.
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API key').waitFor();
    assert.equal(await page.evaluate('sessionStorage.length + localStorage.length'), 0);
    await signIn(page, hangar.apiKey);
  });

  test('a run created in the dashboard is followed live to its end, with its conversation, artifacts and timeline', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Runs' }).click();
    await page.getByRole('link', { name: 'New run' }).click();
    await page.getByLabel('Prompt', { exact: true }).fill(
      script(
        { say: 'Looking at the flaky test.' },
        { say: 'And then: the login test.' },
        { tool: 'npm test -- login' },
        { artifact: true },
        { file: { path: 'report.txt', content: 'all green\n' } },
        {
          emit: { type: 'artifact', artifact_type: 'FILE', data: { path: 'report.txt', description: 'Test report' } },
        },
        { done: 'Fixed the flaky login test.' },
      ),
    );
    await page.getByLabel('Title', { exact: false }).fill('Fix the flaky login test');
    await page.getByRole('button', { name: 'Start run' }).click();

    await page.getByRole('heading', { level: 1, name: 'Fix the flaky login test' }).waitFor();
    const runId = decodeURIComponent(new URL(page.url()).pathname.split('/').pop()!);
    await summary().getByText('Succeeded', { exact: true }).waitFor();
    await summary().getByText('The run has ended').waitFor();
    const ended = await getRun(hangar, runId);
    assert.equal(ended.state, 'SUCCEEDED');
    // The queue wait is the API's (creation to first claim, docs/lifecycle.md), in the overview's words.
    const waited = Number(/^PT(\d+(?:\.\d+)?)S$/.exec(ended.queue_wait)?.[1]);
    const words = waited <= 0 ? '0 s' : waited < 1 ? `${Math.round(waited * 1000)} ms` : `${Math.round(waited)} s`;
    assert.match(await summary().innerText(), new RegExp(`Queue wait\\s+${words}\\b`));
    // The dashboard says who it is: its runs have the source WEB_APP. A client cannot claim any other source.
    assert.equal(ended.source, 'WEB_APP');
    for (const client of ['LOCAL', 'GITHUB_ACTION', 'cli']) {
      const created = await hangar.request('POST', '/api/v1/agent/runs', {
        body: { prompt: 'wait', config: { worker_host: 'absent-box' } },
        headers: { 'x-hangar-client': client },
      });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      assert.equal((await getRun(hangar, created.body.run_id)).source, 'API', client);
    }

    // The conversation as a chat: the prompt, the agent's text, the tool call collapsed until opened.
    await conversation().getByText('Looking at the flaky test.', { exact: true }).waitFor();
    // Two texts of one message stay two paragraphs, not "…test.And then: …".
    await conversation().getByText('And then: the login test.', { exact: true }).waitFor();
    await conversation().getByText('Summary: Fixed the flaky login test.', { exact: true }).waitFor();
    const toolCall = conversation().getByRole('group').filter({ hasText: 'npm test -- login' });
    assert.equal(await toolCall.getByText('Output').isVisible(), false, 'a tool call starts collapsed');
    await toolCall.getByText('npm test -- login').first().click();
    await toolCall.getByText('Output').waitFor();
    assert.match(await toolCall.innerText(), /completed[\s\S]*ok/);

    const artifacts = page.getByRole('region', { name: 'Artifacts' });
    assert.equal(
      await artifacts.getByRole('link', { name: 'https://example.invalid/pr/1' }).getAttribute('href'),
      'https://example.invalid/pr/1',
    );
    // A file artifact downloads through its signed link.
    const file = page.waitForEvent('download');
    await artifacts.getByRole('button', { name: 'Download report.txt' }).click();
    const fileDownload = await file;
    assert.equal(fileDownload.suggestedFilename(), 'report.txt');
    assert.equal(fs.readFileSync((await fileDownload.path())!, 'utf8'), 'all green\n');
    // The timeline in people's words, the API's names in the tooltips, absolute times and step durations.
    const timeline = page.getByRole('region', { name: 'Timeline' });
    const started = timeline.getByText('Agent started', { exact: true });
    await started.waitFor();
    assert.equal(await started.getAttribute('title'), 'API event: agent_started');
    await timeline.getByText('Finished', { exact: true }).waitFor();
    await timeline.getByText(/^Setup took \d+ (ms|s)$/).waitFor();
    await timeline.getByText(/^The agent worked \d+ (ms|s)$/).waitFor();
    const run = await getRun(hangar, runId);
    const times = await timeline.locator('time').allInnerTexts();
    assert.ok(
      times.every((text) => /^\d{1,2}:\d{2}:\d{2}/.test(text ?? '')),
      times.join(', '),
    );
    assert.ok(run.created_at);
    // The harness the run used, in the summary.
    assert.match(await summary().innerText(), /Harness\s+script/);
    assert.match(await summary().innerText(), /Source\s+Dashboard/);

    // The transcript downloads as a file.
    const download = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Download transcript' }).click();
    assert.equal((await download).suggestedFilename(), `transcript-${runId}.jsonl`);
    await screenshot(page, 'run');

    // A follow-up continues the ended run in a new execution, followed live again.
    await page.getByLabel('Follow-up message').fill('Also update the changelog');
    await page.getByRole('button', { name: 'Send follow-up' }).click();
    await page.getByText('Follow-up sent.').waitFor();
    await conversation().getByRole('region', { name: 'Continuation (execution 2)' }).waitFor();
    await conversation().getByText('Also update the changelog', { exact: true }).waitFor();
    await waitForState(hangar, runId, 'SUCCEEDED');
    await summary().getByText('The run has ended').waitFor();

    // On a phone: the same page in one column.
    const phone = await openPage(browser, hangar.url, { width: 390, height: 844 });
    await signIn(phone.page, hangar.apiKey);
    await phone.page.goto(`/runs/${runId}`);
    await phone.page
      .getByRole('region', { name: 'Conversation' })
      .getByText('Summary: Fixed the flaky login test.', { exact: true })
      .first()
      .waitFor();
    await screenshot(phone.page, 'run-phone');
    await phone.page.goto('/runs');
    await phone.page.getByRole('link', { name: 'Fix the flaky login test' }).waitFor();
    await phone.page.getByRole('button', { name: 'Menu' }).click();
    await phone.page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Schedules' }).waitFor();
    await screenshot(phone.page, 'runs-phone');
    assert.deepEqual(phone.problems, []);
    await phone.context.close();
  });

  test('a long-running run is cancelled from its page, and the list shows it', async () => {
    const created = await hangar.request('POST', '/api/v1/agent/runs', {
      body: { title: 'Refactor the billing module', prompt: script({ say: 'Working on it.' }, { sleep: 30_000 }) },
    });
    assert.equal(created.status, 200);
    const runId = created.body.run_id as string;

    await page.goto(`/runs/${runId}`);
    await summary().getByText('In progress', { exact: true }).waitFor();
    // Live: the agent's text arrives while it runs.
    await conversation().getByText('Working on it.', { exact: true }).waitFor();
    acceptNextDialog(page);
    await page.getByRole('button', { name: 'Cancel run' }).click();
    await summary().getByText('Cancelled', { exact: true }).waitFor();
    await summary().getByText('Cancelled by').waitFor();
    assert.equal((await getRun(hangar, runId)).state, 'CANCELLED');
    assert.equal(await page.getByRole('button', { name: 'Cancel run' }).count(), 0);

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Runs' }).click();
    const row = page.getByRole('row').filter({ hasText: 'Refactor the billing module' });
    await row.getByText('Cancelled', { exact: true }).waitFor();
    // Its source in words, with the API's name in the tooltip.
    assert.equal(await row.getByText('API', { exact: true }).getAttribute('title'), 'API');
    await screenshot(page, 'runs');
  });

  test("a plain-text harness's run shows its output instead of a conversation", async () => {
    const created = await hangar.request('POST', '/api/v1/agent/runs', {
      body: { title: 'Plain output', prompt: 'hello there', config: { harness: { type: 'text' } } },
    });
    await waitForState(hangar, created.body.run_id, 'SUCCEEDED');
    await page.goto(`/runs/${created.body.run_id}`);
    await conversation()
      .getByText(/writes plain text/)
      .waitFor();
    await conversation()
      .getByLabel('Output')
      .getByText(/echo: hello there/)
      .waitFor();
  });

  test('the list follows state changes without a reload', async () => {
    await page.goto('/runs');
    await page.getByRole('heading', { level: 1, name: 'Runs' }).waitFor();
    const created = await hangar.request('POST', '/api/v1/agent/runs', {
      body: { title: 'Update the changelog', prompt: script({ say: 'Done.' }) },
    });
    await waitForState(hangar, created.body.run_id, 'SUCCEEDED');
    await page
      .getByRole('row')
      .filter({ hasText: 'Update the changelog' })
      .getByText('Succeeded', { exact: true })
      .waitFor();
  });

  test('the list pages through runs with the filters, sort and search of the API', async () => {
    // Runs for a self-hosted worker that is not connected stay QUEUED: nothing executes them.
    for (let index = 1; index <= 12; index++) {
      const title = `Zebracorn audit ${String(index).padStart(2, '0')}`;
      const created = await hangar.request('POST', '/api/v1/agent/runs', {
        body: { title, prompt: 'audit', config: { worker_host: 'absent-box' } },
      });
      assert.equal(created.status, 200);
    }
    await page.goto('/runs');
    // Two misspelled words of the titles.
    // Filters apply as they change: no button to press.
    await page.getByRole('searchbox', { name: 'Search' }).fill('zebracon audits');
    await page.waitForURL(/q=zebracon/);
    await page.getByLabel('Sort by').selectOption('title');
    await page.getByLabel('Order').selectOption('asc');
    await page.getByLabel('Per page').selectOption('10');
    await page.getByRole('checkbox', { name: 'Queued' }).check();

    const titles = async () => (await page.getByRole('rowheader').allInnerTexts()).map((text) => text.trim());
    const expected = Array.from({ length: 12 }, (_, index) => `Zebracorn audit ${String(index + 1).padStart(2, '0')}`);
    // The unfiltered page shown before may hold some of the same runs: wait for the filtered one itself.
    const showing = (rows: string[]) =>
      eventually(
        `the rows ${rows.join(', ')}`,
        async () => JSON.stringify(await titles()) === JSON.stringify(rows),
        15_000,
      );
    await showing(expected.slice(0, 10));
    assert.match(page.url(), /q=zebracon(\+|%20)audits/);
    assert.match(page.url(), /state=QUEUED/);

    await page.getByRole('button', { name: 'Next page' }).click();
    await showing(expected.slice(10));
    assert.equal(await page.getByRole('button', { name: 'Next page' }).isDisabled(), true);
    await screenshot(page, 'runs-filtered');

    await page.getByRole('button', { name: 'Previous page' }).click();
    await showing(expected.slice(0, 10));

    // Another state filter: none of them matches.
    await page.getByRole('checkbox', { name: 'Queued' }).uncheck();
    await page.getByRole('checkbox', { name: 'Succeeded' }).check();
    await page.getByText('No run matches these filters.').waitFor();
    // Typing keeps its place: the search box still has the focus and the words typed.
    await page.getByRole('searchbox', { name: 'Search' }).fill('zebracorn');
    await page.waitForURL(/q=zebracorn&|q=zebracorn$/);
    assert.equal(await page.getByRole('searchbox', { name: 'Search' }).inputValue(), 'zebracorn');

    // A bad filter value is the API's problem, shown to the person.
    await page.goto('/runs?created_after=yesterday');
    const problem = page.getByRole('alert');
    await problem.getByText('Could not load the runs').waitFor();
    assert.match(await problem.innerText(), /invalid_request/);
  });

  test("a run's page shows its session link and its conversation id", async () => {
    const created = await hangar.request('POST', '/agent/runs', {
      body: { prompt: script({ done: 'Linked.' }), title: 'A linked run' },
    });
    const runId = created.body.run_id as string;
    const run = await waitForState(hangar, runId, 'SUCCEEDED');
    await page.goto(`/runs/${encodeURIComponent(runId)}`);
    await summary().getByText('The run has ended').waitFor();
    const link = summary().getByRole('link', { name: run.session_link });
    assert.equal(await link.getAttribute('href'), `${hangar.url}/runs/${runId}`);
    await summary().getByText(run.conversation_id, { exact: true }).waitFor();
  });

  test("a run's page shows the runner it executed with and that runner's shape", async () => {
    const runner = await hangar.request('POST', '/api/v1/runners', {
      body: { name: 'page-runner', limits: { pids: 256 } },
    });
    assert.equal(runner.status, 201, JSON.stringify(runner.body));
    const created = await hangar.request('POST', '/agent/runs', {
      body: { prompt: script({ done: 'Shaped.' }), config: { runner_id: runner.body.uid } },
    });
    const runId = created.body.run_id as string;
    await waitForState(hangar, runId, 'SUCCEEDED');
    await page.goto(`/runs/${encodeURIComponent(runId)}`);
    await summary().getByText('The run has ended').waitFor();
    await summary().getByText('page-runner 256 processes', { exact: true }).waitFor();
  });

  test("a run's page says when it finished, what it used, its root run and its error's category (issue 52)", async () => {
    const root = await hangar.request('POST', '/agent/runs', { body: { prompt: script({ done: 'Root.' }) } });
    const child = await hangar.request('POST', '/agent/runs', {
      body: { prompt: script({ done: 'Child.' }), parent_run_id: root.body.run_id },
    });
    const created = await hangar.request('POST', '/agent/runs', {
      body: { prompt: script({ usage: true }, { fail: 'It broke.' }), parent_run_id: child.body.run_id },
    });
    const runId = created.body.run_id as string;
    const run = await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR');
    await page.goto(`/runs/${encodeURIComponent(runId)}`);
    await summary().getByText('The run has ended').waitFor();
    await summary().getByText('Finished', { exact: true }).waitFor();
    await summary().getByText(`${run.request_usage.total_tokens} tokens, 0.0100 USD`).waitFor();
    assert.equal(
      await summary().getByRole('link', { name: root.body.run_id }).getAttribute('href'),
      `/runs/${root.body.run_id}`,
    );
    if (run.error_category) await summary().getByText(`(${run.error_category} error)`).waitFor();
  });

  test('the page showed no errors of its own', () => {
    assert.deepEqual(problems, []);
  });
});
