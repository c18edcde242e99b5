import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { eventually, harnessEnv, script, waitForState } from '../support/engine.js';
import { stopChild } from '../support/processes.js';
import { prometheusInstalled, startPrometheus, type TestPrometheus } from '../support/prometheus.js';
import { createRun } from '../support/runs.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { startWorker, type WorkerProcess, waitForConnections } from '../support/workers.js';

const TOKEN = 'metrics-token-0123456789';
const ENDED = ['SUCCEEDED', 'FAILED', 'ERROR', 'BLOCKED', 'CANCELLED'];

describe('/metrics on the API port, scraped by a real Prometheus', {
  skip: !prometheusInstalled() && !process.env.CI,
}, () => {
  let hangar: TestServer;
  let prometheus: TestPrometheus;
  before(async () => {
    hangar = await startTestServer(harnessEnv({}, { HANGAR_METRICS_TOKEN: TOKEN }));
    prometheus = await startPrometheus({ url: hangar.url, token: TOKEN });
  });
  after(async () => {
    await prometheus?.stop();
    await hangar?.stop();
  });

  /** The sum of an expression's samples once Prometheus has scraped again (0 when it has none). */
  const value = async (expression: string) => {
    const samples = await prometheus.query(`sum(${expression})`);
    return samples[0]?.value ?? 0;
  };
  const reaches = (expression: string, expected: number) =>
    eventually(`${expression} == ${expected}`, async () => {
      await prometheus.nextScrape();
      return (await value(expression)) === expected;
    });

  test('without the bearer token /metrics answers 401, with it the text format', async () => {
    const none = await fetch(`${hangar.url}/metrics`);
    assert.equal(none.status, 401);
    assert.match(none.headers.get('www-authenticate') ?? '', /^Bearer/);
    const wrong = await fetch(`${hangar.url}/metrics`, { headers: { authorization: 'Bearer not-the-token' } });
    assert.equal(wrong.status, 401);
    const api = await fetch(`${hangar.url}/metrics`, { headers: { authorization: `Bearer ${hangar.apiKey}` } });
    assert.equal(api.status, 401, 'an API key is not the metrics token');
    const right = await fetch(`${hangar.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(right.status, 200);
    assert.match(right.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    const text = await right.text();
    for (const name of [
      'hangar_runs_created_total',
      'hangar_http_request_duration_seconds',
      'hangar_runs_queue_depth',
      'hangar_workers_connected',
      'hangar_db_pool_connections',
      'process_cpu_seconds_total',
      'nodejs_eventloop_lag_seconds',
    ])
      assert.match(text, new RegExp(`^# TYPE ${name} `, 'm'), name);
  });

  test('every Hangar metric the operations guide and the Grafana dashboard name is served', async () => {
    const text = await (await fetch(`${hangar.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).text();
    const served = new Set([...text.matchAll(/^# TYPE (\S+) /gm)].map((match) => match[1]!));
    const named = (file: string) =>
      new Set(
        [...fs.readFileSync(file, 'utf8').matchAll(/\bhangar_[a-z_]+/g)].map((match) =>
          match[0].replace(/_(bucket|count|sum)$/, ''),
        ),
      );
    const guide = named('docs/operations.md');
    const dashboard = named('docs/grafana/hangar.json');
    assert.ok(guide.size >= 20 && dashboard.size >= 20);
    for (const name of [...guide, ...dashboard]) assert.ok(served.has(name), `${name} is not served`);
    for (const name of served) if (name.startsWith('hangar_')) assert.ok(guide.has(name), `${name} is not documented`);
  });

  test('run counters and histograms move as runs are created and end', async () => {
    await prometheus.nextScrape();
    const before = {
      created: await value('hangar_runs_created_total{source="API"}'),
      succeeded: await value('hangar_runs_ended_total{state="SUCCEEDED"}'),
      failed: await value('hangar_runs_ended_total{state="FAILED"}'),
      durations: await value('hangar_run_duration_seconds_count'),
      durationSum: await value('hangar_run_duration_seconds_sum'),
      agentSum: await value('hangar_run_agent_seconds_sum'),
      waits: await value('hangar_run_queue_wait_seconds_count{executor="engine"}'),
      waitSum: await value('hangar_run_queue_wait_seconds_sum{executor="engine"}'),
      setups: await value('hangar_run_setup_seconds_count'),
      creates: await value('hangar_http_requests_total{route="/api/v1/agent/runs",method="POST",status="200"}'),
    };
    const started = performance.now();
    const runs = await Promise.all([
      createRun(hangar, { prompt: script({ say: 'one' }) }),
      createRun(hangar, { prompt: script({ say: 'two' }) }),
      createRun(hangar, { prompt: script({ fail: 'tests do not pass' }) }),
    ]);
    for (const runId of runs) await waitForState(hangar, runId, ...ENDED);

    await reaches('hangar_runs_created_total{source="API"}', before.created + 3);
    await reaches(
      'hangar_runs_ended_total{state="SUCCEEDED",harness="script",source="API",error_code="none"}',
      2 + before.succeeded,
    );
    await reaches('hangar_runs_ended_total{state="FAILED",harness="script",source="API"}', before.failed + 1);
    await reaches('hangar_run_duration_seconds_count', before.durations + 3);
    await reaches('hangar_run_queue_wait_seconds_count{executor="engine"}', before.waits + 3);
    await reaches('hangar_run_setup_seconds_count', before.setups + 3);
    // The times are seconds (not milliseconds): each of the three runs took more than nothing and less than the test.
    const elapsed = (performance.now() - started) / 1000;
    const added = async (name: string, was: number) => (await value(name)) - was;
    const durations = await added('hangar_run_duration_seconds_sum', before.durationSum);
    assert.ok(durations > 0 && durations < 3 * elapsed, `run durations add ${durations} s in ${elapsed} s`);
    const agents = await added('hangar_run_agent_seconds_sum', before.agentSum);
    assert.ok(agents > 0 && agents < durations, `agent times add ${agents} s, run durations ${durations} s`);
    const waits = await added('hangar_run_queue_wait_seconds_sum{executor="engine"}', before.waitSum);
    assert.ok(waits >= 0 && waits < durations, `queue waits add ${waits} s, run durations ${durations} s`);
    await reaches('hangar_runs_started_total{harness="script"}', 3);
    await reaches(
      'hangar_http_requests_total{route="/api/v1/agent/runs",method="POST",status="200"}',
      before.creates + 3,
    );
    // Route templates, never paths: a run's own URL is counted under its route.
    const runRoutes = await prometheus.query('hangar_http_requests_total{route=~".*runs/.*"}');
    for (const sample of runRoutes) assert.doesNotMatch(sample.metric.route!, /[0-9a-f]{8}-[0-9a-f]{4}/);
    assert.equal(await value('hangar_runs_queue_depth{state="QUEUED"}'), 0);
    assert.ok((await value('hangar_executions_in_flight')) >= 0);
  });

  test('queue depth is read from the database: runs waiting for a worker show up by state and by team', async () => {
    const team = await hangar.createTeamWithUser();
    // Runs for a self-hosted worker that never connects stay QUEUED.
    const waiting = await Promise.all(
      [1, 2].map(() => createRun(hangar, { prompt: 'x', config: { worker_host: 'nobody-here' } }, team.apiKey)),
    );
    assert.equal(waiting.length, 2);
    await reaches('hangar_runs_queue_depth{state="QUEUED"}', 2);
    await reaches(`hangar_runs_queue_depth_by_team{team="${team.teamUid}"}`, 2);
  });
});

describe('/metrics on a port of its own', () => {
  let hangar: TestServer;
  let worker: WorkerProcess | undefined;
  before(async () => {
    hangar = await startTestServer(harnessEnv({}, { HANGAR_METRICS_PORT: '0' }));
  });
  after(async () => {
    if (worker) await stopChild(worker.child, 'SIGKILL');
    await hangar?.stop();
  });

  /** The sum of a metric's samples whose labels include every one of `labels` (the process's registry). */
  const sampled = async (name: string, ...labels: string[]) => {
    const text = await (await fetch(`${hangar.server.metricsUrl}/metrics`)).text();
    let sum = 0;
    for (const line of text.split('\n')) {
      const match = /^(\w+)(\{[^}]*\})? (\S+)$/.exec(line);
      if (match?.[1] === name && labels.every((label) => (match[2] ?? '').includes(label))) sum += Number(match[3]);
    }
    return sum;
  };

  test('serves GET /metrics without a token, nothing else; the API port serves none', async () => {
    const metricsUrl = hangar.server.metricsUrl!;
    assert.ok(metricsUrl);
    const scrape = await fetch(`${metricsUrl}/metrics`);
    assert.equal(scrape.status, 200);
    assert.match(await scrape.text(), /^# TYPE hangar_runs_queue_depth gauge$/m);
    assert.equal((await fetch(`${metricsUrl}/api/v1/agent/runs`)).status, 404);
    assert.equal((await fetch(`${metricsUrl}/metrics`, { method: 'POST' })).status, 404);
    assert.equal((await fetch(`${hangar.url}/metrics`)).status, 404);
  });

  test('runs created in a transaction that rolls back are not counted; committed ones are', async () => {
    const principal = {
      type: 'user' as const,
      uid: hangar.userUid,
      displayName: 'Admin',
      email: null,
      isAdmin: true,
      memberships: [{ team_uid: hangar.teamUid, role: 'admin' as const }],
    };
    // The scheduler's way: runs created inside the caller's transaction, announced once it committed.
    const request = {
      owner: { principal, teamUid: hangar.teamUid, role: 'admin' as const },
      body: { prompt: script({ done: 'ok' }), config: { worker_host: 'nobody-here' } },
      origin: {
        source: 'SCHEDULED_AGENT' as const,
        schedule: { schedule_id: 'metrics-test', schedule_name: 'metrics', cron_schedule: '@daily' },
        scheduleTick: new Date(),
      },
    };
    const runs = hangar.server.services.runs;
    const created = () => sampled('hangar_runs_created_total', 'source="SCHEDULED_AGENT"');
    const before = await created();
    await assert.rejects(
      hangar.db.transaction().execute(async (trx) => {
        await runs.createWithin(trx, [request]);
        throw new Error('rolled back');
      }),
      /rolled back/,
    );
    assert.equal(await created(), before, 'a rolled-back create was counted');
    const committed = await hangar.db.transaction().execute((trx) => runs.createWithin(trx, [request]));
    runs.announceQueued(committed.created);
    assert.equal(await created(), before + 1);
  });

  test("every execution's tokens count, also one that follow-ups continue", async () => {
    const tokens = () => sampled('hangar_model_tokens_total', 'direction="input"');
    const before = await tokens();
    // Each execution reports 10 input tokens; a follow-up sent while the first runs starts a second one (the
    // harness's sleep only keeps it running while the follow-up arrives).
    const runId = await createRun(hangar, { prompt: script({ usage: true }, { sleep: 3000 }, { done: 'ok' }) });
    await waitForState(hangar, runId, 'INPROGRESS');
    const sent = await hangar.request('POST', `/agent/runs/${runId}/followups`, { body: { message: 'and more' } });
    assert.equal(sent.status, 200, JSON.stringify(sent.body));
    assert.equal((await waitForState(hangar, runId, ...ENDED)).state, 'SUCCEEDED');
    const timeline = await hangar.request('GET', `/agent/runs/${runId}/timeline`);
    assert.ok(JSON.stringify(timeline.body).includes('run_continued'), 'the follow-up continued the run');
    await eventually('both executions counted', async () => (await tokens()) === before + 20);
  });

  test("a self-hosted worker's queue wait and setup time are recorded by the server", async () => {
    const setups = () => sampled('hangar_run_setup_seconds_count');
    const waits = () => sampled('hangar_run_queue_wait_seconds_count', 'executor="worker"');
    const before = await setups();
    const waitsBefore = await waits();
    worker = startWorker(hangar, 'metrics-box', { env: harnessEnv() });
    await waitForConnections(hangar, 'metrics-box', 1);
    const runId = await createRun(hangar, { prompt: script({ done: 'ok' }), config: { worker_host: 'metrics-box' } });
    assert.equal((await waitForState(hangar, runId, ...ENDED)).state, 'SUCCEEDED');
    await eventually('the setup is recorded', async () => (await setups()) === before + 1);
    assert.equal(await waits(), waitsBefore + 1);
    const waited = await sampled('hangar_run_queue_wait_seconds_sum', 'executor="worker"');
    assert.ok(waited >= 0 && waited < 60, `the worker's run waited ${waited} s`);
  });
});
