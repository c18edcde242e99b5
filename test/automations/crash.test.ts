import assert from 'node:assert/strict';
import { test } from 'node:test';
import { eventually } from '../support/engine.js';
import { onPostgres, spawnKeyedServer, stopChild, waitForExit } from '../support/processes.js';
import { createTestDatabase, startTestServer } from '../support/server.js';
import { deliver } from '../support/webhooks.js';

test('deliveries acknowledged by a server killed before it started their runs still start them, each once', async (t) => {
  const database = await createTestDatabase();
  t.after(() => database.drop());

  // An API-only process: it acknowledges deliveries but runs no evaluator, so every 202 is a delivery whose run
  // has not started when the process dies.
  const api = await spawnKeyedServer(database, {}, ['--role', 'api']);
  t.after(() => stopChild(api.child, 'SIGKILL'));
  const post = async (path: string, body: unknown) => {
    const response = await fetch(`${api.url}/api/v1${path}`, {
      method: 'POST',
      headers: api.headers,
      body: JSON.stringify(body),
    });
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
    const response = await deliver(hook.url, JSON.stringify({ i }), {
      authorization: `Bearer ${hook.secret}`,
      'x-service-delivery-id': `crash-${i}`,
    });
    assert.equal(response.status, 202);
    acknowledged.push(response.body.delivery_id);
  }
  api.child.kill('SIGKILL');
  await waitForExit(api.child);

  // A full server on the same data: its evaluator finds the committed deliveries and starts their runs.
  const hangar = await startTestServer({ HANGAR_BOOTSTRAP_API_KEY: api.apiKey }, { database });
  t.after(() => hangar.stop());
  const firings = () =>
    hangar.db
      .selectFrom('automation_firings')
      .select(['automation_id', 'run_id'])
      .where('automation_id', '=', automation.id)
      .execute();
  await eventually(
    'every acknowledged delivery evaluated',
    async () => (await firings()).length === acknowledged.length,
  );
  const runIds = (await firings()).map((firing) => firing.run_id);
  assert.ok(runIds.every((runId) => runId !== null));
  assert.equal(new Set(runIds).size, acknowledged.length);
  const runs = await hangar.db.selectFrom('runs').select('id').where('source', '=', 'WEBHOOK').execute();
  assert.equal(runs.length, acknowledged.length, 'one run per delivery, no more');
  // A second evaluator pass finds nothing left to do.
  assert.equal(await hangar.server.evaluator!.evaluatePending(), 0);
  assert.equal(
    (await hangar.db.selectFrom('runs').select('id').where('source', '=', 'WEBHOOK').execute()).length,
    acknowledged.length,
  );
});

test('three replicas evaluating the same deliveries start exactly one run per delivery', {
  skip: onPostgres() ? false : 'several replicas need PostgreSQL (PGlite is one process)',
}, async (t) => {
  const database = await createTestDatabase();
  const env = { HANGAR_WEBHOOK_RATE_PER_MINUTE: '100000' };
  const first = await startTestServer(env, { database });
  const others = [
    await startTestServer({ ...env, HANGAR_BOOTSTRAP_API_KEY: first.apiKey }, { database }),
    await startTestServer({ ...env, HANGAR_BOOTSTRAP_API_KEY: first.apiKey }, { database }),
  ];
  t.after(async () => {
    for (const server of [...others, first]) await server.stop();
    await database.drop();
  });
  const hook = (await first.request('POST', '/api/v1/factory/webhooks', { body: { name: 'replicas' } })).body;
  const automation = await first.request('POST', '/api/v1/factory/automations', {
    body: {
      name: 'replicated',
      prompt: 'p',
      triggers: [{ provider: 'webhook', event: 'received', filter: { webhook_ids: [hook.uid] } }],
    },
  });
  assert.equal(automation.status, 201);
  const servers = [first, ...others];
  const deliveries = 60;
  await Promise.all(
    Array.from({ length: deliveries }, async (_, i) => {
      const url = hook.url.replace(first.url, servers[i % 3]!.url);
      assert.equal((await deliver(url, JSON.stringify({ i }), { authorization: `Bearer ${hook.secret}` })).status, 202);
    }),
  );
  await eventually('every delivery evaluated', async () => {
    const pending = await first.db
      .selectFrom('webhook_deliveries')
      .select('seq')
      .where('evaluated_at', 'is', null)
      .where('status', '=', 'Accepted')
      .execute();
    return pending.length === 0;
  });
  const runs = await first.db.selectFrom('runs').select('id').where('source', '=', 'WEBHOOK').execute();
  assert.equal(runs.length, deliveries);
});
