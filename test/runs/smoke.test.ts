import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestServer, type TestServer } from '../support/server.js';

let hangar: TestServer;
before(async () => (hangar = await startTestServer()));
after(() => hangar.stop());

test('a created run is listed', async () => {
  const created = await hangar.request('POST', '/agent/runs', { body: { prompt: 'hi' } });
  assert.equal(created.status, 200);
  const list = await hangar.request('GET', '/agent/runs');
  assert.equal(list.body.runs[0].run_id, created.body.run_id);
});
