// Issue 48 item 4.10: the key a compose user makes as .env.example says is a key of the kind the sign-in page asks
// for. The command is taken from .env.example and run, the server is started with its key, and a real Chromium
// reads the sign-in page's words and signs in with it.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { browserMissing, ensureDashboardBuilt, launchBrowser, openPage, signIn } from '../support/browser.js';
import { startTestServer, type TestServer } from '../support/server.js';

/** The command the comment above HANGAR_BOOTSTRAP_API_KEY in .env.example tells people to run. */
function bootstrapKeyCommand(): string {
  const lines = fs.readFileSync('.env.example', 'utf8').split('\n');
  const at = lines.findIndex((line) => line.startsWith('HANGAR_BOOTSTRAP_API_KEY='));
  const command = /`([^`]+)`/.exec(lines[at - 1] ?? '')?.[1];
  assert.ok(command, `a command in backquotes above HANGAR_BOOTSTRAP_API_KEY: ${lines[at - 1]}`);
  return command;
}

describe('dashboard: the sign-in page and .env.example agree on what a key is', { skip: browserMissing }, () => {
  let hangar: TestServer;
  let browser: Browser;
  let key: string;
  before(async () => {
    key = execFileSync('sh', ['-c', bootstrapKeyCommand()], { encoding: 'utf8' }).trim();
    await ensureDashboardBuilt();
    hangar = await startTestServer({ HANGAR_BOOTSTRAP_API_KEY: key });
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await hangar?.stop();
  });

  test('the key .env.example makes starts as the sign-in page says, and signs in', async () => {
    const { page, problems, context } = await openPage(browser, hangar.url);
    try {
      await page.goto('/');
      const help = await page.locator('#api-key-help').innerText();
      const prefix = /Keys start with (\S+)/.exec(help)?.[1];
      assert.ok(prefix, help);
      assert.ok(key.startsWith(prefix), `${key} starts with ${prefix}, as the page says`);
      await signIn(page, key);
      assert.deepEqual(problems, []);
    } finally {
      await context.close();
    }
  });
});
