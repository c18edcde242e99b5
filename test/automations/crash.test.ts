import assert from 'node:assert/strict';
import { test } from 'node:test';
import { generateApiKey } from '../../src/platform/crypto.js';
import { eventually } from '../support/engine.js';
import { databaseEnv, stopChild, waitForExit } from '../support/processes.js';
import { createTestDatabase, spawnServer, startTestServer } from '../support/server.js';
import { deliver } from '../support/webhooks.js';

test('deliveries acknowledged by a server killed before it started their runs still start them, each once', async (t) => {
  const database = await createTestDatabase();
  t.after(() => database.drop());
  const apiKey = generateApiKey();
  const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };

  // An API-only process: it acknowledges deliveries but runs no evaluator, so every 202 is a delivery whose run
  // has not started when the process dies.
  const api = await spawnServer({ ...databaseEnv(database), HANGAR_BOOTSTRAP_API_KEY: apiKey }, ['--role', 'api']);
  t.after(() => stopChild(api.child, 'SIGKILL'));
  const post = async (path: string, body: unknown) => {
    const response = await fetch(`${api.url}/api/v1${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
    const parsed = (await response.json()) as any;
    assert.ok(response.ok, JSON.stringify(parsed));
    return parsed;
  };
  const hook = await post('/factory/webhooks', { name: 'crash' });
  const automation = await post('/factory/automations', {
    name: 'crash-automation',
    prompt: 'Handle it.',
    triggers: [{ provider: 'webhook', event: 'received', filter: { webhook_ids: [hook.uid] } }],
  });
  const acknowledged: string[] = [];
  for (let i = 0; i < 5; i++) {
    const response = await deliver(hook.url, JSON.stringify({ i }), { authorization: `Bearer ${hook.secret}`, 'x-service-delivery-id': `crash-${i}` });
    assert.equal(response.status, 202);
    acknowledged.push(response.body.delivery_id);
  }
  api.child.kill('SIGKILL');
  await waitForExit(api.child);

  // A full server on the same data: its evaluator finds the committed deliveries and starts their runs.
  const hangar = await startTestServer({ HANGAR_BOOTSTRAP_API_KEY: apiKey }, { database });
  t.after(() => hangar.stop());
  const firings = () => hangar.db.selectFrom('automation_firings').select(['automation_id', 'run_id']).where('automation_id', '=', automation.id).execute();
  await eventually('every acknowledged delivery evaluated', async () => (await firings()).length === acknowledged.length);
  const runIds = (await firings()).map((firing) => firing.run_id);
  assert.ok(runIds.every((runId) => runId !== null));
  assert.equal(new Set(runIds).size, acknowledged.length);
  const runs = await hangar.db.selectFrom('runs').select('id').where('source', '=', 'WEBHOOK').execute();
  assert.equal(runs.length, acknowledged.length, 'one run per delivery, no more');
  // A second evaluator pass finds nothing left to do.
  assert.equal(await hangar.server.evaluator!.evaluatePending(), 0);
  assert.equal((await hangar.db.selectFrom('runs').select('id').where('source', '=', 'WEBHOOK').execute()).length, acknowledged.length);
});
