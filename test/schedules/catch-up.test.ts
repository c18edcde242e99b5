import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Scheduler } from '../../src/schedules/scheduler.js';
import { startTestServer, type TestServer } from '../support/server.js';

// An injectable clock: cron evaluation, history and catch-up at chosen times, no waiting.
let now = new Date('2026-01-01T00:00:30Z');
let hangar: TestServer;
let scheduler: Scheduler;
before(async () => {
  hangar = await startTestServer({}, { role: 'api', now: () => now });
  scheduler = new Scheduler({
    db: hangar.db,
    runs: hangar.server.services.runs,
    log: hangar.server.app.log,
    now: () => now,
  });
});
after(() => hangar.stop());

async function ticksOf(scheduleId: string): Promise<string[]> {
  const rows = await hangar.db
    .selectFrom('runs')
    .select('schedule_tick')
    .where('schedule_id', '=', scheduleId)
    .orderBy('schedule_tick')
    .execute();
  return rows.map((row) => row.schedule_tick!.toISOString());
}

test('fires on its ticks, once after downtime, then resumes its cadence', async () => {
  const created = await hangar.request('POST', '/agent/schedules', {
    body: { name: 'five', cron_schedule: '*/5 * * * *', prompt: 'p', enabled: true },
  });
  const id = created.body.id as string;
  assert.equal(created.body.history.next_run, '2026-01-01T00:05:00.000Z');

  now = new Date('2026-01-01T00:04:59Z');
  assert.equal(await scheduler.fireDue(), 0, 'not due yet');

  now = new Date('2026-01-01T00:05:00.200Z');
  assert.equal(await scheduler.fireDue(), 1);
  assert.deepEqual(await ticksOf(id), ['2026-01-01T00:05:00.000Z']);
  let item = (await hangar.request('GET', `/agent/schedules/${id}`)).body;
  assert.equal(item.history.next_run, '2026-01-01T00:10:00.000Z');
  assert.equal(item.history.last_ran, '2026-01-01T00:05:00.200Z');

  // Three hours of downtime: one run for the whole missed period, not 37.
  now = new Date('2026-01-01T03:17:00Z');
  assert.equal(await scheduler.fireDue(), 1);
  assert.equal(await scheduler.fireDue(), 0, 'a tick fires once');
  assert.deepEqual(await ticksOf(id), ['2026-01-01T00:05:00.000Z', '2026-01-01T00:10:00.000Z']);
  item = (await hangar.request('GET', `/agent/schedules/${id}`)).body;
  assert.equal(item.history.next_run, '2026-01-01T03:20:00.000Z', 'back on the cadence');

  now = new Date('2026-01-01T03:20:01Z');
  assert.equal(await scheduler.fireDue(), 1);
  assert.equal((await ticksOf(id)).length, 3);
  await hangar.request('DELETE', `/agent/schedules/${id}`);
});

test('paused schedules do not fire and resume from the current time', async () => {
  now = new Date('2026-02-01T10:00:00Z');
  const created = await hangar.request('POST', '/agent/schedules', {
    body: { name: 'hourly', cron_schedule: '@hourly', prompt: 'p', enabled: true },
  });
  const id = created.body.id as string;
  await hangar.request('POST', `/agent/schedules/${id}/pause`);
  now = new Date('2026-02-01T15:30:00Z');
  assert.equal(await scheduler.fireDue(), 0);
  const resumed = (await hangar.request('POST', `/agent/schedules/${id}/resume`)).body;
  assert.equal(resumed.history.next_run, '2026-02-01T16:00:00.000Z');
  assert.equal(await scheduler.fireDue(), 0, 'ticks missed while paused are not made up');
  assert.deepEqual(await ticksOf(id), []);
  await hangar.request('DELETE', `/agent/schedules/${id}`);
});

test('a schedule created paused has no next run', async () => {
  const created = await hangar.request('POST', '/agent/schedules', {
    body: { name: 'off', cron_schedule: '@daily', prompt: 'p', enabled: false },
  });
  assert.equal(created.body.history.next_run, null);
  now = new Date('2027-01-01T00:00:00Z');
  assert.equal(await scheduler.fireDue(), 0);
});
