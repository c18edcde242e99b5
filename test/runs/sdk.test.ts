import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import OzAPI from 'oz-agent-sdk';
import { startTestServer, type TestServer } from '../support/server.js';

// The public client of this interface, used as an oracle: if it works against Hangar, existing callers do.
let hangar: TestServer;
let client: OzAPI;
before(async () => {
  hangar = await startTestServer();
  client = new OzAPI({ apiKey: hangar.apiKey, baseURL: hangar.apiUrl, maxRetries: 0 });
});
after(() => hangar.stop());

test('the SDK creates, retrieves, lists, pages through and cancels runs', async () => {
  const created = await client.agent.run({
    prompt: 'Upgrade the dependencies',
    title: 'Deps',
    config: { model_id: 'm1', name: 'maint' },
  });
  assert.equal(created.state, 'QUEUED');
  assert.equal(created.task_id, created.run_id);

  const run = await client.agent.runs.retrieve(created.run_id);
  assert.equal(run.run_id, created.run_id);
  assert.equal(run.title, 'Deps');
  assert.equal(run.prompt, 'Upgrade the dependencies');
  assert.equal(run.agent_config?.model_id, 'm1');
  assert.equal(run.source, 'API');

  for (let i = 0; i < 6; i++) await client.agent.run({ prompt: `chore ${i}` });
  const seen: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.agent.runs.list({ limit: 3, ...(cursor ? { cursor } : {}) });
    seen.push(...page.runs.map((item) => item.run_id));
    cursor = page.page_info.has_next_page ? page.page_info.next_cursor : undefined;
  } while (cursor);
  assert.equal(seen.length, 7);
  assert.equal(new Set(seen).size, 7);

  const filtered = await client.agent.runs.list({ state: ['QUEUED'], name: 'maint', model_id: 'm1' });
  assert.deepEqual(
    filtered.runs.map((item) => item.run_id),
    [created.run_id],
  );
  const searched = await client.agent.runs.list({ q: 'dependencies' });
  assert.deepEqual(
    searched.runs.map((item) => item.run_id),
    [created.run_id],
  );

  const cancelled = await client.agent.runs.cancel(created.run_id);
  assert.equal(cancelled, created.run_id);
  assert.equal((await client.agent.runs.retrieve(created.run_id)).state, 'CANCELLED');
  assert.deepEqual(
    (await client.agent.runs.list({ state: ['CANCELLED'] })).runs.map((item) => item.run_id),
    [created.run_id],
  );
});

test('the SDK surfaces Hangar errors with their status and body', async () => {
  await assert.rejects(client.agent.run({}), (error: InstanceType<typeof OzAPI.BadRequestError>) => {
    assert.ok(error instanceof OzAPI.BadRequestError);
    assert.equal((error.error as { error_code: string }).error_code, 'invalid_request');
    return true;
  });
  await assert.rejects(client.agent.runs.retrieve('00000000-0000-0000-0000-000000000000'), OzAPI.NotFoundError);
  const { run_id } = await client.agent.run({ prompt: 'x' });
  await client.agent.runs.cancel(run_id);
  await assert.rejects(client.agent.runs.cancel(run_id), OzAPI.BadRequestError);
  const stranger = new OzAPI({ apiKey: 'hgr_not-a-key', baseURL: hangar.apiUrl, maxRetries: 0 });
  await assert.rejects(stranger.agent.runs.list(), OzAPI.AuthenticationError);
});
