import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { eventuallySignalled } from '../support/engine.js';
import { GitFixtures, skillFile } from '../support/git.js';
import { addAgentIdentity, addEnvironmentWithRepos } from '../support/runs.js';
import { startTestServer, type TestServer } from '../support/server.js';

// Real time: every-second schedules fired by the server's own scheduler loop.
let hangar: TestServer;
const git = new GitFixtures();
before(async () => {
  git.createRepo('acme', 'ops', {
    'skills/triage/SKILL.md': skillFile('triage', 'Triages issues', 'Label every new issue.'),
  });
  hangar = await startTestServer({ HANGAR_GIT_BASE_URL: git.baseUrl });
});
after(async () => {
  await hangar.stop();
  git.remove();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function createSchedule(body: Record<string, unknown>) {
  const response = await hangar.request('POST', '/agent/schedules', {
    body: { name: 'every second', cron_schedule: '* * * * * *', prompt: 'tick', enabled: true, ...body },
  });
  assert.equal(response.status, 201, JSON.stringify(response.body));
  return response.body as { id: string };
}

async function runsOf(scheduleId: string) {
  const response = await hangar.request(
    'GET',
    `/agent/runs?schedule_id=${scheduleId}&limit=500&sort_by=created_at&sort_order=asc`,
  );
  assert.equal(response.status, 200);
  return response.body.runs as Array<Record<string, any>>;
}

/** The probe's first value, looked for again at each run's lifecycle signal (a tick creates runs). */
async function waitFor<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 15_000): Promise<T> {
  let value: T | undefined | false;
  await eventuallySignalled(
    what,
    async () => {
      value = await probe();
      return Boolean(value);
    },
    timeoutMs,
  );
  return value as T;
}

async function scheduleItem(id: string) {
  return (await hangar.request('GET', `/agent/schedules/${id}`)).body;
}

describe('scheduler', () => {
  test('a due tick starts a run carrying the schedule, its config, metadata and agent', async () => {
    const agent = await addAgentIdentity(hangar);
    const schedule = await createSchedule({
      name: 'Snapshot me',
      agent_config: { model_id: 'm-7', name: 'nightly' },
      metadata: { owner: 'ops' },
      agent_uid: agent,
    });
    const [run] = await waitFor('a scheduled run', async () => {
      const runs = await runsOf(schedule.id);
      return runs.length > 0 && runs;
    });
    assert.equal(run!.source, 'SCHEDULED_AGENT');
    assert.equal(run!.state, 'QUEUED');
    assert.equal(run!.prompt, 'tick');
    assert.equal(run!.title, 'Snapshot me');
    assert.deepEqual(run!.schedule, {
      schedule_id: schedule.id,
      schedule_name: 'Snapshot me',
      cron_schedule: '* * * * * *',
    });
    assert.equal(run!.agent_config.model_id, 'm-7');
    assert.equal(run!.agent_config.name, 'nightly');
    assert.deepEqual(run!.metadata, { owner: 'ops' });
    assert.deepEqual(run!.executor, { type: 'service_account', uid: agent, display_name: 'Release bot' });
    assert.equal(run!.creator.uid, hangar.userUid);
    const item = await waitFor('history', async () => {
      const current = await scheduleItem(schedule.id);
      return current.history.last_ran && current;
    });
    assert.ok(new Date(item.history.next_run) > new Date(item.history.last_ran));
    await hangar.request('DELETE', `/agent/schedules/${schedule.id}`);
  });

  test('a schedule with a skill and an environment starts runs resolved like API runs', async () => {
    // Resolution happens inside the scheduler's transaction; on PGlite (one connection) it must use it.
    const environment = await addEnvironmentWithRepos(hangar, ['acme/ops']);
    const schedule = await createSchedule({
      name: 'Triage',
      agent_config: { skill_spec: 'ops:triage', environment_id: environment },
    });
    const run = await waitFor('a skill run', async () => (await runsOf(schedule.id))[0]);
    assert.equal(run.agent_config.skill_spec, 'acme/ops:skills/triage/SKILL.md');
    assert.equal(run.agent_config.base_prompt.trim(), 'Label every new issue.');
    assert.equal(run.agent_config.environment_id, environment);
    assert.deepEqual(run.agent_skill, {
      name: 'triage',
      description: 'Triages issues',
      full_path: 'skills/triage/SKILL.md',
    });
    assert.equal((await scheduleItem(schedule.id)).last_spawn_error, null);
    await hangar.request('DELETE', `/agent/schedules/${schedule.id}`);
  });

  test('pause stops runs at once, resume starts them again, delete stops them for good', async () => {
    const schedule = await createSchedule({});
    await waitFor('first run', async () => (await runsOf(schedule.id)).length >= 1);
    await hangar.request('POST', `/agent/schedules/${schedule.id}/pause`);
    const atPause = (await runsOf(schedule.id)).length;
    // That nothing happens can only be watched for a while: no event tells of a run not started.
    await sleep(2500);
    assert.equal((await runsOf(schedule.id)).length, atPause, 'no run while paused');

    await hangar.request('POST', `/agent/schedules/${schedule.id}/resume`);
    await waitFor('a run after resume', async () => (await runsOf(schedule.id)).length > atPause);

    await hangar.request('DELETE', `/agent/schedules/${schedule.id}`);
    const atDelete = (await runsOf(schedule.id)).length;
    // As above: only watched for a while.
    await sleep(2500);
    const remaining = await runsOf(schedule.id);
    assert.equal(remaining.length, atDelete, 'no run after delete');
    assert.ok(
      remaining.every((run) => run.state === 'QUEUED'),
      'runs already started are untouched',
    );
  });

  test('an update takes effect on the next tick', async () => {
    const schedule = await createSchedule({ name: 'before' });
    await waitFor('a run named before', async () =>
      (await runsOf(schedule.id)).some((run) => run.schedule.schedule_name === 'before'),
    );
    await hangar.request('PUT', `/agent/schedules/${schedule.id}`, {
      body: { name: 'after', cron_schedule: '*/2 * * * * *', prompt: 'changed', enabled: true },
    });
    const run = await waitFor('a run named after', async () =>
      (await runsOf(schedule.id)).find((r) => r.schedule.schedule_name === 'after'),
    );
    assert.equal(run.prompt, 'changed');
    assert.equal(run.schedule.cron_schedule, '*/2 * * * * *');
    await hangar.request('DELETE', `/agent/schedules/${schedule.id}`);
  });

  test('a failed spawn is reported in last_spawn_error and cleared by the next success', async () => {
    const agent = await addAgentIdentity(hangar);
    const schedule = await createSchedule({ agent_uid: agent });
    await waitFor('first run', async () => (await runsOf(schedule.id)).length >= 1);
    // The agent identity goes away: the schedule keeps ticking but cannot start runs.
    await hangar.db.deleteFrom('agent_identities').where('uid', '=', agent).execute();
    const failing = await waitFor('a spawn error', async () => {
      const item = await scheduleItem(schedule.id);
      return item.last_spawn_error && item;
    });
    assert.match(failing.last_spawn_error, /agent identity/);
    assert.ok(failing.history.next_run, 'still scheduled');
    await hangar.request('PUT', `/agent/schedules/${schedule.id}`, {
      body: { name: 'recovered', cron_schedule: '* * * * * *', prompt: 'tick', enabled: true },
    });
    const recovered = await waitFor('the error cleared', async () => {
      const item = await scheduleItem(schedule.id);
      return (
        item.last_spawn_error === null && (await runsOf(schedule.id)).some((run) => run.title === 'recovered') && item
      );
    });
    assert.ok(recovered.history.last_ran);
    await hangar.request('DELETE', `/agent/schedules/${schedule.id}`);
  });
});
