// The dashboard's GitHub page (issue 30) in a real headless Chromium against a real Hangar configured as a GitHub
// App, with the test GitHub REST server answering whose an installation is: an instance administrator links and
// unlinks a team's installation and its personal access token secret, and makes an automation on a GitHub event; a team admin is told the page is not theirs.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import {
  acceptNextDialog,
  browserMissing,
  ensureDashboardBuilt,
  launchBrowser,
  openPage,
  screenshot,
  signIn,
} from '../support/browser.js';
import { type GitHubStack, startGitHubStack } from '../support/github-stack.js';
import type { TestServer } from '../support/server.js';

describe('dashboard: GitHub links', { skip: browserMissing }, () => {
  let stack: GitHubStack;
  let hangar: TestServer;
  let browser: Browser;
  let page: Page;
  let problems: string[];

  before(async () => {
    await ensureDashboardBuilt();
    stack = await startGitHubStack({
      repos: [{ owner: 'acme', repo: 'api' }],
      installations: [{ id: 7, account: 'acme', repos: ['acme/api'] }],
    });
    hangar = stack.hangar;
    browser = await launchBrowser();
    ({ page, problems } = await openPage(browser, hangar.url));
    await signIn(page, hangar.apiKey);
  });
  after(async () => {
    await browser?.close();
    await stack?.stop();
  });

  const links = async () =>
    (await hangar.request('GET', `/api/v1/admin/teams/${hangar.teamUid}/github`)).body.links as any[];

  test('an instance administrator links an installation and a token secret, sees them, and unlinks them', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'GitHub', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'GitHub' }).waitFor();
    await page.getByText('This team has no GitHub link.').waitFor();

    // An installation GitHub does not know is refused with the API's reason; a known one shows its account.
    const install = page.getByRole('form', { name: 'Link an installation' });
    await install.getByLabel(/Installation ID/).fill('999');
    await install.getByRole('button', { name: 'Link installation' }).click();
    await page.getByRole('alert').getByText("Could not change the team's GitHub links").waitFor();
    await install.getByLabel(/Installation ID/).fill('7');
    await install.getByRole('button', { name: 'Link installation' }).click();
    const row = page.getByRole('row').filter({ hasText: 'Installation 7' });
    await row.getByText('acme', { exact: true }).waitFor();
    assert.deepEqual(
      (await links()).map((link) => [link.installation_id, link.account]),
      [[7, 'acme']],
    );

    // A token secret must name a secret of the team.
    const token = page.getByRole('form', { name: 'Use a personal access token' });
    await token.getByLabel(/Team secret holding a personal access token/).fill('GITHUB_PAT');
    await token.getByRole('button', { name: 'Use token secret' }).click();
    await page
      .getByRole('alert')
      .getByText(/no secret named "GITHUB_PAT"/)
      .waitFor();
    const secret = await hangar.request('POST', '/api/v1/secrets', {
      body: { name: 'GITHUB_PAT', value: 'github_pat_TEST0123456789abcdefghij' },
    });
    assert.equal(secret.status, 201, JSON.stringify(secret.body));
    await token.getByRole('button', { name: 'Use token secret' }).click();
    await page.getByRole('row').filter({ hasText: 'Token secret GITHUB_PAT' }).waitFor();
    assert.ok((await links()).some((link) => link.token_secret === 'GITHUB_PAT'));
    await screenshot(page, 'github');

    acceptNextDialog(page);
    await page.getByRole('button', { name: 'Unlink installation 7' }).click();
    await row.waitFor({ state: 'detached' });
    acceptNextDialog(page);
    await page.getByRole('button', { name: 'Unlink token secret GITHUB_PAT' }).click();
    await page.getByText('This team has no GitHub link.').waitFor();
    assert.deepEqual(await links(), []);
  });

  test('an automation on a GitHub event: created from the Automations page, shown with its event and filter', async () => {
    await page
      .getByRole('navigation', { name: 'Main' })
      .getByRole('link', { name: 'Automations', exact: true })
      .click();
    await page.getByText('No automations yet.').waitFor();
    await page.getByRole('button', { name: 'New automation' }).click();
    const form = page.getByRole('form', { name: 'New automation' });
    await form.getByLabel('Name').fill('fix on review');
    await form.getByLabel('Prompt').fill('Address the review.');
    await form.getByRole('radio', { name: 'A GitHub event' }).check();
    await form.getByRole('combobox', { name: 'GitHub event' }).selectOption('review');
    await form.getByLabel(/Payload filter/).fill('{"repository": {"name": ["api"]}}');
    await form.getByRole('button', { name: 'Create automation' }).click();
    const card = page.getByRole('listitem').filter({ has: page.getByRole('heading', { name: 'fix on review' }) });
    await card.getByText('review', { exact: true }).waitFor();
    const [automation] = (await hangar.request('GET', '/api/v1/factory/automations')).body.automations;
    assert.deepEqual(automation.triggers, [
      { provider: 'github', event: 'review', filter: { payload: { repository: { name: ['api'] } } } },
    ]);
    await screenshot(page, 'automations-github');
  });

  test('a team admin who is not an instance administrator has no GitHub entry, and the page says why', async () => {
    const member = await hangar.addUser(hangar.teamUid, 'admin');
    const other = await openPage(browser, hangar.url);
    try {
      const asked = other.page.waitForResponse((response) => response.url().endsWith('/api/v1/admin/teams'));
      await signIn(other.page, member.apiKey);
      await asked;
      const menu = other.page.getByRole('navigation', { name: 'Main' });
      assert.equal(await menu.getByRole('link', { name: 'GitHub' }).count(), 0);
      await other.page.goto('/github');
      await other.page.getByText('Only an instance administrator can link a team to GitHub.').waitFor();
      assert.deepEqual(other.problems, []);
    } finally {
      await other.context.close();
    }
  });

  test('the page showed no errors of its own', () => {
    assert.deepEqual(problems, []);
  });
});
