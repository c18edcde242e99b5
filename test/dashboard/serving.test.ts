// How Hangar serves the dashboard: its files at `/`, its page for the client's routes, and never in place of the
// server's own paths, which keep their problem+json answers.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import Fastify from 'fastify';
import { registerDashboard } from '../../src/platform/http/dashboard.js';
import { ensureDashboardBuilt } from '../support/browser.js';
import { startTestServer, type TestServer } from '../support/server.js';

const HTML = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

describe('serving the dashboard', () => {
  let hangar: TestServer;

  before(async () => {
    await ensureDashboardBuilt();
    hangar = await startTestServer();
  });
  after(async () => hangar?.stop());

  const get = (urlPath: string, accept = '*/*') => fetch(`${hangar.url}${urlPath}`, { headers: { accept } });

  test('`/` is the dashboard, with its assets cached for good and the page never', async () => {
    const page = await get('/');
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type')!, /^text\/html/);
    assert.equal(page.headers.get('cache-control'), 'no-cache');
    assert.match(page.headers.get('content-security-policy')!, /script-src 'self'/);
    const html = await page.text();
    assert.match(html, /<div id="root"><\/div>/);

    const script = /<script type="module" crossorigin src="([^"]+)"/.exec(html)![1]!;
    const asset = await get(script);
    assert.equal(asset.status, 200);
    assert.match(asset.headers.get('content-type')!, /javascript/);
    assert.match(asset.headers.get('cache-control')!, /immutable/);
  });

  test("a browser opening one of the dashboard's pages gets the dashboard", async () => {
    for (const urlPath of [
      '/runs',
      '/runs/4f1c2a9e-0000-4000-8000-000000000000',
      '/factory/webhooks/abc?delivery=x',
      '/schedules',
    ]) {
      const page = await get(urlPath, HTML);
      assert.equal(page.status, 200, urlPath);
      assert.match(await page.text(), /<div id="root">/, urlPath);
    }
  });

  test("the server's own paths keep their answers, even for a browser", async () => {
    const problem = async (response: Response, status: number) => {
      assert.equal(response.status, status, response.url);
      assert.match(response.headers.get('content-type')!, /^application\/problem\+json/, response.url);
      return (await response.json()) as { error_code: string };
    };
    for (const urlPath of [
      '/api/v1/agent/nothing-here',
      '/api/v1/agent/runs/a/b/c',
      '/api',
      '/errors/no_such_code',
      '/assets/missing.js',
      '/healthz/x',
      '/readyz/x',
      '/docs/nothing-here',
    ]) {
      assert.equal((await problem(await get(urlPath, HTML), 404)).error_code, 'resource_not_found');
    }
    // The webhook ingress answers for itself (405 for a GET).
    assert.equal((await get('/webhooks/w/anything', HTML)).status, 405);
    assert.equal((await get('/webhooks', HTML)).status, 404);
    // A client that is not a browser navigating gets the API's 404 for an unknown path.
    await problem(await get('/runs'), 404);
    // Not for writes either.
    await problem(await fetch(`${hangar.url}/runs`, { method: 'POST', headers: { accept: HTML } }), 404);
    assert.equal((await get('/healthz', HTML)).status, 200);
    assert.match(await (await get('/docs', HTML)).text(), /swagger/i);
    assert.equal((await get('/api/v1/openapi.json', HTML)).status, 200);
  });

  test('without a build, `/` says how to make one', async () => {
    const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-no-dashboard-'));
    const app = Fastify();
    await registerDashboard(app, { publicUrl: 'http://127.0.0.1:8080', directory: empty });
    try {
      for (const [urlPath, accept] of [
        ['/', '*/*'],
        ['/runs', HTML],
      ] as const) {
        const response = await app.inject({ method: 'GET', url: urlPath, headers: { accept } });
        assert.equal(response.statusCode, 404);
        assert.match(response.headers['content-type'] as string, /^text\/html/);
        assert.match(response.body, /npm run build/);
      }
      assert.notEqual(
        (await app.inject({ method: 'GET', url: '/api/v1/x', headers: { accept: HTML } })).headers['content-type'],
        'text/html; charset=utf-8',
      );
    } finally {
      await app.close();
      fs.rmSync(empty, { recursive: true, force: true });
    }
  });
});
