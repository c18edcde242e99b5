import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { browserMissing, ensureDashboardBuilt, launchBrowser, openPage } from '../support/browser.js';
import { startTestServer, type TestServer } from '../support/server.js';

describe('browser-facing security headers', { skip: browserMissing }, () => {
  let hangar: TestServer;
  let browser: Browser;
  /** A page of another origin that tries to frame Hangar's pages (clickjacking). */
  let framer: http.Server;
  let framerUrl: string;
  before(async () => {
    await ensureDashboardBuilt();
    hangar = await startTestServer();
    browser = await launchBrowser();
    framer = http.createServer((request, response) => {
      const target = new URL(request.url!, 'http://x').searchParams.get('target')!;
      response
        .writeHead(200, { 'content-type': 'text/html' })
        .end(`<!doctype html><iframe id="f" src="${hangar.url}${target}"></iframe>`);
    });
    await new Promise<void>((resolve) => framer.listen(0, '127.0.0.1', resolve));
    framerUrl = `http://localhost:${(framer.address() as AddressInfo).port}`;
  });
  after(async () => {
    await browser?.close();
    framer?.close();
    await hangar?.stop();
  });

  test('/docs has a Content-Security-Policy and refuses framing, and the Swagger UI still works under it', async () => {
    const docs = await fetch(`${hangar.url}/docs/`);
    assert.equal(docs.status, 200);
    const policy = docs.headers.get('content-security-policy') ?? '';
    assert.match(policy, /frame-ancestors 'none'/);
    assert.match(policy, /script-src 'self'/);
    assert.doesNotMatch(/script-src[^;]*/.exec(policy)![0], /unsafe-inline|unsafe-eval/);
    assert.equal(docs.headers.get('x-frame-options'), 'DENY');
    assert.equal(docs.headers.get('x-content-type-options'), 'nosniff');

    const { context, page, problems } = await openPage(browser, hangar.url);
    const violations: string[] = [];
    page.on('console', (message) => /Content Security Policy/i.test(message.text()) && violations.push(message.text()));
    await page.goto('/docs');
    await page.locator('.swagger-ui .info .title', { hasText: 'Hangar API' }).waitFor();
    // A tag opens, then an operation (the UI's scripts run and its styles apply).
    await page.locator('.opblock-tag', { hasText: 'Runs' }).first().click();
    await page.locator('.opblock-summary', { hasText: '/agent/runs' }).first().click();
    await page.locator('.opblock-body').first().waitFor();
    assert.deepEqual([...violations, ...problems], []);
    await context.close();
  });

  test('API answers carry a deny-all policy; the dashboard keeps its own; neither can be framed by another site', async () => {
    const api = await hangar.request('GET', '/api/v1/agent/runs');
    assert.equal(api.status, 200);
    assert.match(api.headers.get('content-security-policy')!, /default-src 'none'.*frame-ancestors 'none'/);
    assert.equal(api.headers.get('x-frame-options'), 'DENY');
    const problem = await hangar.request('GET', '/api/v1/agent/runs/nope', { apiKey: null });
    assert.equal(problem.headers.get('x-content-type-options'), 'nosniff');
    const dashboard = await fetch(`${hangar.url}/index.html`);
    assert.match(dashboard.headers.get('content-security-policy')!, /script-src 'self'.*frame-ancestors 'none'/);

    for (const target of ['/docs/', '/']) {
      const { context, page } = await openPage(browser, framerUrl);
      // The load event waits for the frame: by then it shows the page, or the browser's refusal.
      await page.goto(`/?target=${encodeURIComponent(target)}`, { waitUntil: 'load' });
      const frame = page.frames().find((candidate) => candidate !== page.mainFrame())!;
      assert.equal(
        await frame.locator('#swagger-ui, #root').count(),
        0,
        `${target} rendered inside another site's frame`,
      );
      await context.close();
    }
  });
});
