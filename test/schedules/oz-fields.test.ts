import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { eventuallySignalled } from '../support/engine.js';
import { addAgentIdentity } from '../support/runs.js';
import { startTestServer, type TestServer } from '../support/server.js';

// Oz's scheduled agent (its public OpenAPI document, read for issue 52 field 6): `mode` one of normal, plan or
// orchestrate, applied to every run it starts and never guessed from the prompt; `metadata` a string map stamped on
// every run, cleared by a PUT that leaves it out; `agent_uid` the executing agent; `last_spawn_error` a string or
// null; `created_by` and `updated_by` principals whose `type` is user or service_account; `history` with
// `last_ran` and `next_run`, each a timestamp or null; `environment` the resolved config of the environment
// agent_config.environment_id names.
let hangar: TestServer;
before(async () => (hangar = await startTestServer()));
after(() => hangar.stop());

const base = { name: 'Nightly', cron_schedule: '0 3 * * *', prompt: 'Triage', enabled: true };

async function environment(apiKey?: string, name = 'Storefront') {
  const response = await hangar.request('POST', '/api/v1/environments', {
    apiKey,
    body: { name, description: 'the shop', setup_commands: ['npm ci'] },
  });
  assert.equal(response.status, 201, JSON.stringify(response.body));
  return response.body.uid as string;
}

describe('scheduled agents: the fields of Oz (issue 52, field 6)', () => {
  test('mode, metadata, agent, principals, history and the resolved environment, each of its type', async () => {
    const agent = await addAgentIdentity(hangar);
    const env = await environment();
    const created = await hangar.request('POST', '/agent/schedules', {
      body: {
        ...base,
        mode: 'plan',
        agent_uid: agent,
        metadata: { ticket: 'OPS-1' },
        agent_config: { environment_id: env },
      },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const item = created.body;
    assert.equal(item.mode, 'plan');
    assert.equal(item.agent_uid, agent);
    assert.deepEqual(item.metadata, { ticket: 'OPS-1' });
    assert.equal(item.last_spawn_error, null);
    for (const who of [item.created_by, item.updated_by]) {
      assert.equal(who.type, 'user');
      assert.equal(who.uid, hangar.userUid);
      assert.equal(typeof who.display_name, 'string');
    }
    assert.equal(item.history.last_ran, null);
    assert.ok(!Number.isNaN(Date.parse(item.history.next_run)));
    assert.equal(item.environment.name, 'Storefront');
    assert.equal(item.environment.description, 'the shop');
    assert.deepEqual(item.environment.setup_commands, ['npm ci']);
    const listed = (await hangar.request('GET', '/agent/schedules')).body.schedules;
    assert.deepEqual(
      listed.find((schedule: { id: string }) => schedule.id === item.id),
      item,
    );

    for (const mode of ['normal', 'orchestrate']) {
      const response = await hangar.request('PUT', `/agent/schedules/${item.id}`, { body: { ...base, mode } });
      assert.equal(response.status, 200, JSON.stringify(response.body));
      assert.equal(response.body.mode, mode);
    }
    const refused = await hangar.request('POST', '/agent/schedules', { body: { ...base, mode: 'PLAN' } });
    assert.equal(refused.status, 400);
    assert.match(refused.body.detail, /mode/);

    // Full replacement: a PUT without metadata or mode clears them; without agent_config, no environment.
    const replaced = await hangar.request('PUT', `/agent/schedules/${item.id}`, { body: base });
    assert.equal(replaced.status, 200);
    assert.deepEqual(replaced.body.metadata, {});
    assert.equal(replaced.body.mode, undefined);
    assert.equal(replaced.body.environment, undefined);
  });

  test("another team's environment is never shown through a schedule", async () => {
    const other = await hangar.createTeamWithUser();
    const theirs = await environment(other.apiKey, 'Secret plans');
    const created = await hangar.request('POST', '/agent/schedules', {
      body: { ...base, agent_config: { environment_id: theirs } },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(created.body.environment, undefined);
    assert.doesNotMatch(JSON.stringify(created.body), /Secret plans/);
  });

  test("a schedule made with an agent identity's key names it as a service_account", async () => {
    const agent = await addAgentIdentity(hangar);
    const key = await hangar.request('POST', '/api/v1/admin/api-keys', { body: { name: 'bot', agent_uid: agent } });
    assert.equal(key.status, 201);
    const created = await hangar.request('POST', '/agent/schedules', { apiKey: key.body.key, body: base });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.deepEqual(created.body.created_by, { type: 'service_account', uid: agent });
  });

  test('every run a schedule starts has its mode and metadata', async () => {
    const created = await hangar.request('POST', '/agent/schedules', {
      body: { ...base, cron_schedule: '* * * * * *', mode: 'plan', metadata: { ticket: 'OPS-2' } },
    });
    assert.equal(created.status, 201);
    let run: { id: string; mode: string } | undefined;
    await eventuallySignalled(
      'a run of the schedule (no run started)',
      async () => {
        run = await hangar.db
          .selectFrom('runs')
          .select(['id', 'mode'])
          .where('schedule_id', '=', created.body.id)
          .executeTakeFirst();
        return run !== undefined;
      },
      20_000,
    );
    if (!run) throw new Error('no run started');
    await hangar.request('POST', `/agent/schedules/${created.body.id}/pause`);
    assert.equal(run.mode, 'plan');
    const detail = await hangar.request('GET', `/agent/runs/${run.id}`);
    assert.equal(detail.body.metadata.ticket, 'OPS-2');
  });
});
