import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestServer, type TestServer } from '../support/server.js';

// Issue 52, field 9: every problem's `type` is the documentation page of its error_code, served by Hangar itself:
// a page for a person, the same words as JSON for a client. The codes are the interface's (wire-details.md) and
// Oz's public error catalogue, written here by hand.
const CODES = [
  'insufficient_credits',
  'feature_not_available',
  'external_authentication_required',
  'not_authorized',
  'invalid_request',
  'resource_not_found',
  'budget_exceeded',
  'integration_disabled',
  'integration_not_configured',
  'operation_not_supported',
  'environment_setup_failed',
  'content_policy_violation',
  'conflict',
  'authentication_required',
  'resource_unavailable',
  'internal_error',
];

let hangar: TestServer;
before(async () => {
  hangar = await startTestServer({}, { role: 'api' });
});
after(() => hangar.stop());

test("a problem's type opens its code's page: HTML for a browser, JSON else, for every code of the catalogue", async () => {
  const refused = await hangar.request('GET', '/api/v1/agent/runs', { apiKey: null });
  assert.equal(refused.status, 401);
  // The type is under the public URL; the test reaches the same server at its listening address.
  const page = await fetch(new URL(new URL(refused.body.type).pathname, hangar.url), {
    headers: { accept: 'text/html,application/xhtml+xml' },
  });
  assert.equal(page.status, 200);
  assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
  const html = await page.text();
  assert.match(html, /<h1><code>authentication_required<\/code>/);
  assert.match(html, /What to do/);

  for (const code of CODES) {
    const answer = await hangar.request('GET', `/errors/${code}`, { apiKey: null });
    assert.equal(answer.status, 200, code);
    assert.equal(answer.body.error_code, code);
    assert.equal(typeof answer.body.title, 'string');
    assert.equal(typeof answer.body.meaning, 'string');
    assert.equal(typeof answer.body.remedy, 'string');
    assert.ok(Number.isInteger(answer.body.status));
  }
  const index = await hangar.request('GET', '/errors', { apiKey: null });
  for (const code of CODES) assert.ok(index.body.error_codes.includes(code), code);
  // Not a code: 404, and nothing inherited from Object is taken for one.
  assert.equal((await hangar.request('GET', '/errors/constructor', { apiKey: null })).status, 404);
});

test('the published Error schema has provider and auth_url for external_authentication_required', async () => {
  const doc = (await hangar.request('GET', '/api/v1/openapi.json', { apiKey: null })).body;
  const schema = JSON.stringify(doc);
  assert.match(schema, /"provider":\{[^}]*"type":"string"/);
  assert.match(schema, /"auth_url":\{[^}]*"format":"uri"/);
});
