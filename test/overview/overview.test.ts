// GET /api/v1/overview against a real server whose runs execute (script harness), a real scheduler and a real
// webhook delivery: every figure of the overview page, for the caller's team only.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { runOverview } from '../../src/runs/index.js';
import { deleteEndedRuns } from '../../src/runs/lifecycle/retention.js';
import { eventually, eventuallySignalled, harnessEnv, script, waitForState } from '../support/engine.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { createWebhook, deliver } from '../support/webhooks.js';

describe('overview', () => {
  let hangar: TestServer;
  let otherTeam: { teamUid: string; apiKey: string };
  before(async () => {
    hangar = await startTestServer(harnessEnv());
    otherTeam = await hangar.createTeamWithUser();
  });
  after(() => hangar?.stop());

  const create = async (body: Record<string, unknown>, apiKey?: string) => {
    const response = await hangar.request('POST', '/api/v1/agent/runs', { body, apiKey });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return response.body.run_id as string;
  };
  const overview = async (query = '', apiKey?: string) => {
    const response = await hangar.request('GET', `/api/v1/overview${query}`, { apiKey });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return response.body;
  };
  const total = (body: any, state: string) =>
    body.runs_by_hour.reduce((sum: number, bucket: any) => sum + (bucket.counts[state] ?? 0), 0);

  test("a team's runs by hour and state, the queue, wait and run times, failures, spend and the busiest", async () => {
    const succeeded = [
      await create({ prompt: script({ usage: true }, { done: 'ok' }), config: { model_id: 'claude-sonnet-4' } }),
      await create({ prompt: script({ usage: true }, { usage: true }, { done: 'ok' }) }),
    ];
    const failed = await create({
      prompt: script({ emit: { type: 'failed', message: 'The tests fail', error_code: 'tests_failed' } }),
    });
    // Nothing executes runs for a self-hosted worker that is not connected: they wait.
    await create({ prompt: 'wait', config: { worker_host: 'absent-box' } });
    await create({ prompt: 'wait', config: { worker_host: 'absent-box' } });
    for (const runId of succeeded) await waitForState(hangar, runId, 'SUCCEEDED');
    await waitForState(hangar, failed, 'FAILED');

    // A schedule that fires every second, stopped after its second run.
    const schedule = await hangar.request('POST', '/api/v1/agent/schedules', {
      body: { name: 'Nightly audit', cron_schedule: '* * * * * *', prompt: script({ done: 'ok' }), enabled: true },
    });
    assert.equal(schedule.status, 201, JSON.stringify(schedule.body));
    await eventuallySignalled('two scheduled runs', async () => {
      const runs = await hangar.request('GET', `/api/v1/agent/runs?schedule_id=${schedule.body.id}`);
      return runs.body.runs.length >= 2;
    });
    await hangar.request('DELETE', `/api/v1/agent/schedules/${schedule.body.id}`);

    // An automation started by a webhook delivery.
    const hook = await createWebhook(hangar, { name: 'issues' });
    const automation = await hangar.request('POST', '/api/v1/factory/automations', {
      body: {
        name: 'Triage issues',
        prompt: script({ done: 'triaged' }),
        triggers: [{ provider: 'webhook', event: 'received', filter: { webhook_ids: [hook.uid] } }],
      },
    });
    assert.equal(automation.status, 201, JSON.stringify(automation.body));
    const delivered = await deliver(hook.url, '{"action":"opened"}', {
      authorization: `Bearer ${hook.secret}`,
      'x-service-delivery-id': 'issue-1',
    });
    assert.equal(delivered.status, 202);

    let body: any;
    await eventually('the automation counted', async () => {
      body = await overview();
      return body.busiest_automations.length === 1;
    });
    assert.equal(body.window, '24h');
    assert.equal(body.bucket_seconds, 3600);
    assert.equal(body.runs_by_hour.length, 24);
    assert.equal(new Date(body.runs_by_hour[0].at).getTime(), new Date(body.since).getTime());
    assert.equal(new Date(body.since).getUTCMinutes(), 0);
    assert.ok(total(body, 'SUCCEEDED') >= 2);
    assert.equal(total(body, 'FAILED'), 1);
    assert.equal(total(body, 'QUEUED') >= 2, true);

    assert.ok(body.queue.waiting_now >= 2);
    assert.ok(body.queue.queued_now >= 2);
    // The hour now ends with the runs still waiting.
    assert.equal(body.queue.over_time.length, 24);
    assert.ok(body.queue.over_time.at(-1).waiting >= 2);

    assert.ok(body.queue_wait.runs >= 3);
    assert.ok(body.queue_wait.p50_seconds >= 0 && body.queue_wait.p95_seconds >= body.queue_wait.p50_seconds);
    assert.ok(body.run_time.runs >= 3);
    assert.ok(body.run_time.p95_seconds >= body.run_time.p50_seconds);

    assert.deepEqual(body.failures, [{ error_code: 'tests_failed', runs: 1 }]);

    // The script harness reports 0.01 USD per usage event: three in all.
    const spent = body.spend_by_day.reduce((sum: number, day: any) => sum + day.cost_usd, 0);
    assert.ok(Math.abs(spent - 0.03) < 1e-9, `spent ${spent}`);
    assert.ok(body.spend_by_day.some((day: any) => day.model_id === 'claude-sonnet-4' && day.cost_usd > 0));

    assert.equal(body.busiest_schedules[0].name, 'Nightly audit');
    assert.equal(body.busiest_schedules[0].schedule_id, schedule.body.id);
    assert.ok(body.busiest_schedules[0].runs >= 2);
    assert.deepEqual(body.busiest_automations, [{ automation_id: automation.body.id, name: 'Triage issues', runs: 1 }]);

    const week = await overview('?window=7d');
    assert.equal(week.runs_by_hour.length, 168);
    assert.equal(total(week, 'FAILED'), 1);
  });

  test('the rollup of ended runs agrees with the runs themselves, through follow-ups and deletions', async () => {
    const HOUR = 3600_000;
    const windows = [24, 168].map((hours) => {
      const until = new Date();
      const since = new Date(Math.floor(until.getTime() / HOUR) * HOUR - (hours - 1) * HOUR);
      return { hours, since, until, bucketSeconds: 3600 };
    });
    const agree = async (when: string) => {
      // The two overviews are read one after the other: a run still executing (the earlier tests leave some) could
      // end between them and be counted as running in one and ended in the other. Compare once none is.
      await eventuallySignalled('no run of the team is executing', async () => {
        const executing = await sql<{ runs: number }>`
          SELECT count(*)::int AS runs FROM runs
          WHERE team_uid = ${hangar.teamUid} AND state IN ('CLAIMED', 'INPROGRESS')`.execute(hangar.db);
        return executing.rows[0]!.runs === 0;
      });
      for (const window of windows) {
        const fromRollup = await runOverview(hangar.db, hangar.teamUid, window);
        const fromRuns = await runOverview(hangar.db, hangar.teamUid, window, { from: 'runs' });
        // Costs are summed in another order (exactly, in numeric): equal to the cent's billionth.
        const rounded = (overview: typeof fromRuns) =>
          JSON.parse(
            JSON.stringify(overview, (_, value) => (typeof value === 'number' ? Number(value.toFixed(9)) : value)),
          );
        assert.deepEqual(rounded(fromRollup), rounded(fromRuns), `${when}, ${window.hours} h`);
      }
      // The hourly totals hold every ended run of the team once (after folding the pending changes).
      await overview();
      const folded = await sql<{ runs: number }>`
        SELECT coalesce(sum(runs), 0)::int AS runs FROM run_overview_hours
        WHERE team_uid = ${hangar.teamUid} AND kind = 'runs'`.execute(hangar.db);
      const ended = await sql<{ runs: number }>`
        SELECT count(*)::int AS runs FROM runs
        WHERE team_uid = ${hangar.teamUid} AND state IN ('SUCCEEDED', 'FAILED', 'BLOCKED', 'ERROR', 'CANCELLED')`.execute(
        hangar.db,
      );
      assert.equal(folded.rows[0]!.runs, ended.rows[0]!.runs, when);
      assert.ok(ended.rows[0]!.runs > 0);
    };
    await agree('after the first test');

    // A follow-up takes an ended run back to the queue and ends it again: its old end leaves the totals. Read before
    // any fold, the change is still pending and counted from run_overview_changes.
    const [ended] = (await hangar.request('GET', '/api/v1/agent/runs?state=SUCCEEDED&limit=1')).body.runs;
    const followup = await hangar.request('POST', `/api/v1/agent/runs/${ended.run_id}/followups`, {
      body: { message: script({ done: 'again' }) },
    });
    assert.ok(followup.status < 300, JSON.stringify(followup.body));
    await eventuallySignalled('the follow-up ended', async () => {
      const run = await hangar.request('GET', `/api/v1/agent/runs/${ended.run_id}`);
      return ['SUCCEEDED', 'FAILED', 'ERROR'].includes(run.body.state);
    });
    const pending = await sql<{ changes: number }>`
      SELECT count(*)::int AS changes FROM run_overview_changes WHERE team_uid = ${hangar.teamUid}`.execute(hangar.db);
    assert.ok(pending.rows[0]!.changes >= 2, 'the follow-up left its changes to fold');
    await agree('after a follow-up');

    // Retention deletes ended runs: they leave the totals too.
    assert.equal((await deleteEndedRuns(hangar.db, new Date(), 2)).runs, 2);
    await agree('after deleting two runs');
  });

  test('a background pass folds the changes of teams that never open the overview', async () => {
    const folding = await startTestServer(harnessEnv({}, { HANGAR_OVERVIEW_FOLD_SECONDS: '1' }));
    try {
      const response = await folding.request('POST', '/api/v1/agent/runs', {
        body: { prompt: script({ done: 'ok' }) },
      });
      assert.equal(response.status, 200, JSON.stringify(response.body));
      const pending = () =>
        sql<{ changes: number }>`
          SELECT count(*)::int AS changes FROM run_overview_changes WHERE team_uid = ${folding.teamUid}`.execute(
          folding.db,
        );
      await eventuallySignalled('the run ended and its change is pending', async () => {
        const run = await folding.request('GET', `/api/v1/agent/runs/${response.body.run_id}`);
        return run.body.state === 'SUCCEEDED';
      });
      // Nobody reads this team's overview: only the loop can empty its pending changes into the totals.
      await eventually(
        'the change was folded without an overview',
        async () => (await pending()).rows[0]!.changes === 0,
      );
      const folded = await sql<{ runs: number }>`
        SELECT coalesce(sum(runs), 0)::int AS runs FROM run_overview_hours
        WHERE team_uid = ${folding.teamUid} AND kind = 'runs'`.execute(folding.db);
      assert.equal(folded.rows[0]!.runs, 1);
    } finally {
      await folding.stop();
    }
  });

  test('another team sees none of these numbers, only its own', async () => {
    const body = await overview('', otherTeam.apiKey);
    assert.equal(
      body.runs_by_hour.every((bucket: any) => Object.keys(bucket.counts).length === 0),
      true,
    );
    assert.equal(body.queue.waiting_now, 0);
    assert.deepEqual(body.failures, []);
    assert.deepEqual(body.spend_by_day, []);
    assert.deepEqual(body.busiest_schedules, []);
    assert.deepEqual(body.busiest_automations, []);
    assert.equal(body.queue_wait.p50_seconds, null);

    await create({ prompt: 'wait', config: { worker_host: 'absent-box' } }, otherTeam.apiKey);
    const own = await overview('', otherTeam.apiKey);
    assert.equal(total(own, 'QUEUED'), 1);
    assert.equal(own.queue.waiting_now, 1);
  });

  test('an unknown window is refused, and the overview needs a key', async () => {
    const response = await hangar.request('GET', '/api/v1/overview?window=1y');
    assert.equal(response.status, 400);
    assert.equal(response.body.error_code, 'invalid_request');
    assert.equal((await hangar.request('GET', '/api/v1/overview', { apiKey: null })).status, 401);
  });
});
