// The run page's Share control and the shared run's page, in a real headless Chromium: a member shares a run, a
// visitor without a key opens the link (sees the run, sends a follow-up through an EDITOR link), the member revokes
// it and the visitor's page opens nothing any more.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import {
  acceptNextDialog,
  browserMissing,
  type DashboardSession,
  dashboardSession,
  openPage,
} from '../support/browser.js';
import { createRun } from '../support/runs.js';
import type { TestServer } from '../support/server.js';

describe('dashboard: sharing a run', { skip: browserMissing }, () => {
  let session: DashboardSession;
  let hangar: TestServer;
  let page: Page;
  let problems: string[];

  before(async () => {
    session = await dashboardSession({}, { signIn: true });
    ({ hangar, page, problems } = session);
  });
  after(() => session?.close());

  test('share with follow-ups, open the link without a key, follow up, revoke', async () => {
    const runId = await createRun(hangar, { title: 'Shared in the dashboard', prompt: 'show the visitor' });
    await page.goto(`/runs/${runId}`);
    const sharing = page.getByRole('region', { name: 'Sharing' });
    await sharing.getByText('Only members of the team see this run.').waitFor();
    await sharing.getByRole('button', { name: 'Share with follow-ups' }).click();
    const field = sharing.getByRole('textbox', { name: 'Share link' });
    await field.waitFor();
    const url = await field.inputValue();
    assert.match(url, /\/shared\/run#hgs_[A-Za-z0-9]{40}$/);
    await sharing.getByText('Anyone with the link can read this run and send it follow-ups.').waitFor();

    const visitor = await openPage(session.browser, hangar.url);
    try {
      await visitor.page.goto(url);
      await visitor.page.getByRole('heading', { level: 1, name: 'Shared in the dashboard' }).waitFor();
      await visitor.page.getByText('Shared with you: you may send follow-ups').waitFor();
      await visitor.page.getByText('show the visitor').first().waitFor();
      // No sign-in, no navigation of the team's pages.
      assert.equal(await visitor.page.getByRole('navigation', { name: 'Main' }).count(), 0);
      await visitor.page.getByLabel('Follow-up message').fill('a visitor asks for more');
      await visitor.page.getByRole('button', { name: 'Send follow-up' }).click();
      await visitor.page.getByText('Sent: the run takes it as if its creator had.').waitFor();
      const inputs = await hangar.db.selectFrom('run_inputs').select('message').where('run_id', '=', runId).execute();
      assert.ok(inputs.some((input) => input.message === 'a visitor asks for more'));

      // The member's page says the follow-up came through the link.
      await page.reload();
      await page.getByRole('region', { name: 'Timeline' }).getByText('sent through the share link').waitFor();

      acceptNextDialog(page);
      await sharing.getByRole('button', { name: 'Revoke link' }).click();
      await sharing.getByText('Only members of the team see this run.').waitFor();
      await visitor.page.reload();
      await visitor.page.getByText(/This link opens nothing/).waitFor();
      // A dead link's page stops asking: each ask would count as a failed authentication of the visitor's address.
      let asked = 0;
      visitor.page.on('request', (request) => {
        if (request.url().includes('/api/v1/shared/run')) asked++;
      });
      await new Promise((resolve) => setTimeout(resolve, 6000));
      assert.equal(asked, 0);
      assert.deepEqual(visitor.problems, []);
    } finally {
      await visitor.context.close();
    }
    assert.deepEqual(problems, []);
  });
});
