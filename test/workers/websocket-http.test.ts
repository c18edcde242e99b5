/**
 * The worker websocket's URL as plain HTTP sees it: a request without an upgrade, or with a query the schema
 * refuses, gets a problem+json answer (issue 24: a repeated worker_id was a 500, a plain GET an empty 404).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type RawAnswer, rawRequest } from '../support/raw-http.js';
import { startTestServer, type TestServer } from '../support/server.js';

const WEBSOCKET = '/api/v1/selfhosted/worker/ws';
const UPGRADE = {
  connection: 'Upgrade',
  upgrade: 'websocket',
  'sec-websocket-version': '13',
  'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
};

let hangar: TestServer;
before(async () => {
  hangar = await startTestServer();
});
after(() => hangar?.stop());

function assertProblem(answer: RawAnswer, status: number, detail: RegExp): void {
  assert.equal(answer.status, status, answer.text);
  assert.match(String(answer.headers['content-type']), /^application\/problem\+json/);
  const problem = JSON.parse(answer.text) as { status: number; error_code: string; detail: string };
  assert.equal(problem.status, status);
  assert.equal(problem.error_code, 'invalid_request');
  assert.match(problem.detail, detail);
}

test('a plain GET of the worker websocket is a 426 problem+json that asks for a websocket upgrade, key or not', async () => {
  for (const headers of [{}, { authorization: `Bearer ${hangar.workerKey}` }] as Array<Record<string, string>>) {
    const answer = await rawRequest(hangar.url, { method: 'GET', path: `${WEBSOCKET}?worker_id=w1`, headers });
    assertProblem(answer, 426, /websocket upgrade/);
    assert.equal(answer.headers.upgrade, 'websocket');
  }
  const head = await rawRequest(hangar.url, {
    method: 'HEAD',
    path: `${WEBSOCKET}?worker_id=a&worker_id=b`,
    headers: { authorization: `Bearer ${hangar.workerKey}` },
  });
  assert.equal(head.status, 426);
  assert.match(String(head.headers['content-type']), /^application\/problem\+json/);
});

test('a worker_id given twice, bracketed or empty is a 400 before the upgrade, and one worker_id still connects', async () => {
  const headers = { ...UPGRADE, authorization: `Bearer ${hangar.workerKey}` };
  for (const query of ['worker_id=a&worker_id=b', 'worker_id[]=a', 'worker_id[a]=b', 'worker_id=', 'worker_id=%20'])
    assertProblem(
      await rawRequest(hangar.url, { method: 'GET', path: `${WEBSOCKET}?${query}`, headers }),
      400,
      /worker_id/,
    );
  const connected = await rawRequest(hangar.url, { method: 'GET', path: `${WEBSOCKET}?worker_id=w1`, headers });
  assert.equal(connected.status, 101);
});

test('an upgrade request to a route that serves no websocket is refused in plain HTTP, not switched and closed', async () => {
  for (const path of ['/api/v1/agent/runs', '/healthz', '/api/v1/openapi.json']) {
    const answer = await rawRequest(hangar.url, {
      method: 'GET',
      path,
      headers: { ...UPGRADE, authorization: `Bearer ${hangar.apiKey}` },
    });
    assertProblem(answer, 400, /takes no websocket upgrade/);
  }
  const unknown = await rawRequest(hangar.url, { method: 'GET', path: '/api/v1/no-such-route', headers: UPGRADE });
  assert.equal(unknown.status, 404, unknown.text);
  assert.match(String(unknown.headers['content-type']), /^application\/problem\+json/);
});
