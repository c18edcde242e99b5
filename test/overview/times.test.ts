// Issue 48 items 4.2 and 4.7: a run's queue wait and run time have one definition each (docs/lifecycle.md), the
// same in the API, the CLI and the overview: the queue wait from creation to the first claim, the run time the
// agent's own time over its executions. Runs that never started, or are still executing, are in neither figure.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { BINS_PER_E } from '../../src/runs/lifecycle/overview-rollup.js';
import { hangarCli } from '../support/cli.js';
import { getRun, harnessEnv, script, waitForState } from '../support/engine.js';
import { createRun } from '../support/runs.js';
import { startTestServer, type TestServer } from '../support/server.js';

/** Seconds of an ISO 8601 duration as the API writes them (PT1H2M3.5S). */
function seconds(iso: string): number {
  const match = /^PT(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?$/.exec(iso);
  assert.ok(match, iso);
  return Number(match[1] ?? 0) * 3600 + Number(match[2] ?? 0) * 60 + Number(match[3] ?? 0);
}

/** The overview's figure for a duration: the middle of its log-spaced bin (src/runs/lifecycle/overview-rollup.ts). */
const binned = (value: number) => Math.exp((Math.floor(Math.log(1 + value) * BINS_PER_E) + 0.5) / BINS_PER_E) - 1;

async function overview(hangar: TestServer): Promise<any> {
  const response = await hangar.request('GET', '/api/v1/overview');
  assert.equal(response.status, 200, JSON.stringify(response.body));
  return response.body;
}

describe('runs that never started count in neither figure', () => {
  let hangar: TestServer;
  before(async () => {
    // API only: nothing claims a run.
    hangar = await startTestServer({}, { role: 'api' });
  });
  after(() => hangar.stop());

  test('three QUEUED runs and a cancelled one: no queue wait, no run time', async () => {
    const runs = [await createRun(hangar), await createRun(hangar), await createRun(hangar), await createRun(hangar)];
    assert.equal((await hangar.request('POST', `/agent/runs/${runs[3]}/cancel`)).status, 200);
    const body = await overview(hangar);
    assert.deepEqual(body.queue_wait, { p50_seconds: null, p95_seconds: null, runs: 0 });
    assert.deepEqual(body.run_time, { p50_seconds: null, p95_seconds: null, runs: 0 });
    const run = await getRun(hangar, runs[0]!);
    assert.equal(run.queue_wait, undefined);
    assert.equal(run.run_time, undefined);
  });
});

describe('queue wait and run time, one definition each', () => {
  let hangar: TestServer;
  before(async () => {
    hangar = await startTestServer(harnessEnv());
  });
  after(() => hangar.stop());

  test('a run still executing has no run time in the overview yet', async () => {
    const runId = await createRun(hangar, {
      prompt: script({ listen: true }, { done: 'ok' }),
      config: { harness: { type: 'listener' } },
    });
    await waitForState(hangar, runId, 'INPROGRESS');
    const body = await overview(hangar);
    assert.equal(body.run_time.runs, 0, JSON.stringify(body.run_time));
    // Claimed: its queue wait is known and counted.
    assert.equal(body.queue_wait.runs, 1, JSON.stringify(body.queue_wait));
    assert.ok((await getRun(hangar, runId)).run_time, 'the API shows the time so far');
    assert.equal((await hangar.request('POST', `/agent/runs/${runId}/cancel`)).status, 200);
    await waitForState(hangar, runId, 'CANCELLED');
  });

  test('setup is not queue wait, and the hour before a follow-up is not run time', async () => {
    const runId = await createRun(hangar, { prompt: script({ say: 'working' }, { done: 'ok' }) });
    await waitForState(hangar, runId, 'SUCCEEDED');
    // As if setting up had taken ten minutes and the follow-up came an hour after the end: the first execution's
    // times are moved back as the clock would have put them, its creation and first claim ten minutes further.
    await sql`UPDATE runs SET created_at = created_at - interval '70 minutes', claimed_at = claimed_at - interval '70 minutes',
                started_at = started_at - interval '60 minutes', ended_at = ended_at - interval '60 minutes'
              WHERE id = ${runId}`.execute(hangar.db);
    const followup = await hangar.request('POST', `/agent/runs/${runId}/followups`, {
      body: { message: 'and the docs' },
    });
    assert.ok(followup.status < 300, JSON.stringify(followup.body));
    await waitForState(hangar, runId, 'SUCCEEDED');
    const run = await getRun(hangar, runId);
    // Two executions of an agent that worked well under a minute each: not the hour between them.
    const runTime = seconds(run.run_time);
    assert.ok(runTime < 120, `run time ${run.run_time}`);
    // From creation to the first claim, not to the agent's start ten minutes of setup later.
    const queueWait = seconds(run.queue_wait);
    assert.ok(queueWait < 60, `queue wait ${run.queue_wait}`);

    // The CLI says the same.
    const shown = await hangarCli(['runs', 'get', runId], { url: hangar.url, apiKey: hangar.apiKey });
    assert.match(shown.stdout, /^Queue wait: +(\d+ ms|\d+ s)$/m);
    assert.match(shown.stdout, /^Run time: +\d+ s$/m);

    // The overview's rollup bins the same figures (the other test's run is in it too).
    const body = await overview(hangar);
    const waits = await sql<{ bin: number; runs: number }>`
      SELECT bin, sum(runs)::int AS runs FROM run_overview_hours
      WHERE team_uid = ${hangar.teamUid} AND kind = 'wait' GROUP BY bin HAVING sum(runs) <> 0`.execute(hangar.db);
    const times = await sql<{ bin: number; runs: number }>`
      SELECT bin, sum(runs)::int AS runs FROM run_overview_hours
      WHERE team_uid = ${hangar.teamUid} AND kind = 'run' GROUP BY bin HAVING sum(runs) <> 0`.execute(hangar.db);
    const binOf = (value: number) => Math.floor(Math.log(1 + value) * BINS_PER_E);
    // The API rounds run time to whole seconds: the bins are of the exact figures, which the API's round.
    const exact = await sql<{ agent_seconds: number; wait: number }>`
      SELECT agent_seconds, date_part('epoch', claimed_at - created_at)::float8 AS wait FROM runs
      WHERE id = ${runId}`.execute(hangar.db);
    const { agent_seconds: worked, wait } = exact.rows[0]!;
    assert.equal(runTime, Math.round(worked));
    assert.ok(Math.abs(queueWait - wait) < 0.001, `${queueWait} and ${wait}`);
    assert.ok(
      waits.rows.some((row) => row.bin === binOf(wait)),
      `queue wait ${queueWait} s in ${JSON.stringify(waits.rows)}`,
    );
    assert.ok(
      times.rows.some((row) => row.bin === binOf(worked)),
      `run time ${runTime} s in ${JSON.stringify(times.rows)}`,
    );
    assert.ok(body.run_time.p95_seconds < 120, JSON.stringify(body.run_time));
    assert.ok(body.queue_wait.p95_seconds < 60, JSON.stringify(body.queue_wait));
    assert.ok(body.queue_wait.runs >= 1 && binned(wait) <= body.queue_wait.p95_seconds + 1e-9);
  });
});
