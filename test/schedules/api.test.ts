import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OzAPI from 'oz-agent-sdk';
import { nextTickAfter } from '../../src/schedules/cron.js';
import { addAgentIdentity } from '../support/runs.js';
import { startTestServer, type TestServer } from '../support/server.js';

let hangar: TestServer;
// API only: no scheduler loop firing while these tests look at the items.
before(async () => (hangar = await startTestServer({}, { role: 'api' })));
after(() => hangar.stop());

const base = { name: 'Nightly triage', cron_schedule: '0 3 * * *', prompt: 'Triage new issues', enabled: true };

async function create(body: Record<string, unknown> = {}, apiKey?: string) {
  const response = await hangar.request('POST', '/agent/schedules', { body: { ...base, ...body }, apiKey });
  assert.equal(response.status, 201, JSON.stringify(response.body));
  return response.body;
}

describe('scheduled agents API', () => {
  test('create answers 201 with the item, its history and next run', async () => {
    const before = new Date();
    const item = await create({ agent_config: { model_id: 'm1' }, metadata: { team: 'core' } });
    assert.match(item.id, /^[0-9a-f-]{36}$/);
    assert.equal(item.name, 'Nightly triage');
    assert.equal(item.cron_schedule, '0 3 * * *');
    assert.equal(item.prompt, 'Triage new issues');
    assert.equal(item.enabled, true);
    assert.deepEqual(item.agent_config, { model_id: 'm1' });
    assert.deepEqual(item.metadata, { team: 'core' });
    assert.equal(item.history.last_ran, null);
    assert.equal(item.history.next_run, nextTickAfter('0 3 * * *', before)!.toISOString());
    assert.equal(item.last_spawn_error, null);
    assert.deepEqual(item.created_by, { type: 'user', uid: hangar.userUid, display_name: 'Admin' });
    assert.deepEqual(item.scope, { type: 'Team', uid: hangar.teamUid });
    const fetched = await hangar.request('GET', `/agent/schedules/${item.id}`);
    assert.equal(fetched.status, 200);
    assert.deepEqual(fetched.body, item);
  });

  test('required fields and bad cron expressions give 400 naming the problem', async () => {
    for (const field of ['name', 'cron_schedule', 'prompt', 'enabled']) {
      const body: Record<string, unknown> = { ...base };
      delete body[field];
      const response = await hangar.request('POST', '/agent/schedules', { body });
      assert.equal(response.status, 400, field);
      assert.equal(response.body.error_code, 'invalid_request');
      assert.match(response.body.detail, new RegExp(field));
    }
    for (const [cron, reason] of [
      ['61 * * * *', /minute/],
      ['* * *', /5 fields/],
      ['@reboot', /macro/],
      ['0 0 30 2 *', /never/],
    ] as const) {
      const response = await hangar.request('POST', '/agent/schedules', { body: { ...base, cron_schedule: cron } });
      assert.equal(response.status, 400, cron);
      assert.match(response.body.detail, reason);
    }
    assert.equal((await hangar.request('POST', '/agent/schedules', { body: { ...base, name: '  ' } })).status, 400);
    assert.equal((await hangar.request('POST', '/agent/schedules', { body: { ...base, enabled: 'yes' } })).status, 400);
    assert.equal(
      (await hangar.request('POST', '/agent/schedules', { body: { ...base, metadata: { 'bad key': 'v' } } })).status,
      400,
    );
    assert.equal(
      (await hangar.request('POST', '/agent/schedules', { body: { ...base, agent_uid: 'nobody' } })).status,
      403,
    );
  });

  test('macros are accepted', async () => {
    const item = await create({ cron_schedule: '@hourly' });
    assert.equal(new Date(item.history.next_run).getUTCMinutes(), 0);
  });

  test('the list is sorted by name', async () => {
    const team = await hangar.createTeamWithUser();
    for (const name of ['charlie', 'Alpha', 'bravo']) await create({ name }, team.apiKey);
    const response = await hangar.request('GET', '/agent/schedules', { apiKey: team.apiKey });
    assert.equal(response.status, 200);
    const names = response.body.schedules.map((item: { name: string }) => item.name);
    assert.deepEqual(
      names,
      [...names].sort((a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)),
    );
    assert.equal(names.length, 3);
  });

  test('pause clears the next run; resume sets it from now', async () => {
    const item = await create({ cron_schedule: '*/10 * * * *' });
    const paused = await hangar.request('POST', `/agent/schedules/${item.id}/pause`);
    assert.equal(paused.status, 200);
    assert.equal(paused.body.enabled, false);
    assert.equal(paused.body.history.next_run, null);
    const before = new Date();
    const resumed = await hangar.request('POST', `/agent/schedules/${item.id}/resume`);
    assert.equal(resumed.status, 200);
    assert.equal(resumed.body.enabled, true);
    assert.equal(resumed.body.history.next_run, nextTickAfter('*/10 * * * *', before)!.toISOString());
  });

  test('PUT replaces the whole item and needs every field but agent_config', async () => {
    const agent = await addAgentIdentity(hangar);
    const item = await create({ metadata: { a: 'b' }, agent_config: { model_id: 'm1' } });
    const missing = await hangar.request('PUT', `/agent/schedules/${item.id}`, {
      body: { name: 'x', cron_schedule: '@daily', prompt: 'p' },
    });
    assert.equal(missing.status, 400);
    assert.match(missing.body.detail, /enabled/);
    const updated = await hangar.request('PUT', `/agent/schedules/${item.id}`, {
      body: { name: 'Renamed', cron_schedule: '@daily', prompt: 'New prompt', enabled: false, agent_uid: agent },
    });
    assert.equal(updated.status, 200);
    assert.equal(updated.body.name, 'Renamed');
    assert.equal(updated.body.prompt, 'New prompt');
    assert.equal(updated.body.enabled, false);
    assert.equal(updated.body.history.next_run, null);
    assert.equal(updated.body.agent_uid, agent);
    assert.deepEqual(updated.body.metadata, {}, 'omitted metadata is cleared');
    assert.equal(updated.body.agent_config, undefined, 'omitted agent_config is cleared');
    assert.ok(updated.body.updated_at >= item.updated_at);
    const bad = await hangar.request('PUT', `/agent/schedules/${item.id}`, {
      body: { ...base, cron_schedule: 'nope' },
    });
    assert.equal(bad.status, 400);
  });

  test('delete answers success and the schedule is gone', async () => {
    const item = await create();
    const deleted = await hangar.request('DELETE', `/agent/schedules/${item.id}`);
    assert.equal(deleted.status, 200);
    assert.deepEqual(deleted.body, { success: true });
    for (const [method, path] of [
      ['GET', ''],
      ['DELETE', ''],
      ['POST', '/pause'],
      ['POST', '/resume'],
    ] as const) {
      const response = await hangar.request(method, `/agent/schedules/${item.id}${path}`);
      assert.equal(response.status, 404, `${method} ${path}`);
      assert.equal(response.body.error_code, 'resource_not_found');
    }
    assert.equal((await hangar.request('PUT', `/agent/schedules/${item.id}`, { body: base })).status, 404);
  });

  test('another team can neither see nor touch a schedule', async () => {
    const item = await create();
    const other = await hangar.createTeamWithUser();
    const list = await hangar.request('GET', '/agent/schedules', { apiKey: other.apiKey });
    assert.ok(!list.body.schedules.some((s: { id: string }) => s.id === item.id));
    for (const [method, path, body] of [
      ['GET', '', undefined],
      ['PUT', '', base],
      ['POST', '/pause', undefined],
      ['POST', '/resume', undefined],
      ['DELETE', '', undefined],
    ] as const) {
      const response = await hangar.request(method, `/agent/schedules/${item.id}${path}`, {
        apiKey: other.apiKey,
        body,
      });
      assert.equal(response.status, 404, `${method} ${path}`);
    }
    assert.equal((await hangar.request('GET', `/agent/schedules/${item.id}`)).body.enabled, true);
    assert.equal((await hangar.request('GET', '/agent/schedules', { apiKey: null })).status, 401);
  });

  test('the oz-agent-sdk client manages schedules', async () => {
    const client = new OzAPI({ apiKey: hangar.apiKey, baseURL: hangar.apiUrl, maxRetries: 0 });
    const created = await client.agent.schedules.create({
      name: 'sdk',
      cron_schedule: '*/15 * * * *',
      prompt: 'p',
      enabled: true,
    });
    assert.equal(created.name, 'sdk');
    assert.ok(created.history?.next_run);
    assert.equal((await client.agent.schedules.pause(created.id)).enabled, false);
    assert.equal((await client.agent.schedules.resume(created.id)).enabled, true);
    const updated = await client.agent.schedules.update(created.id, {
      name: 'sdk2',
      cron_schedule: '@hourly',
      prompt: 'q',
      enabled: true,
    });
    assert.equal(updated.name, 'sdk2');
    assert.ok((await client.agent.schedules.list()).schedules.some((s) => s.id === created.id));
    assert.deepEqual(await client.agent.schedules.delete(created.id), { success: true });
    await assert.rejects(client.agent.schedules.retrieve(created.id), OzAPI.NotFoundError);
  });
});
