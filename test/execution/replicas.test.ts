import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  describeProcesses,
  eventually,
  harnessEnv,
  processesWith,
  script,
  timelineTypes,
  waitForRun,
  waitForState,
} from '../support/engine.js';
import { onPostgres, spawnKeyedServer, stopChild } from '../support/processes.js';
import { createRun } from '../support/runs.js';
import { createTestDatabase, startTestServer } from '../support/server.js';

const postgresOnly = onPostgres() ? false : 'several replicas need PostgreSQL (PGlite is one process)';

describe('several engine replicas on one PostgreSQL', { skip: postgresOnly }, () => {
  test('every run is claimed once, and the global limit holds across replicas', async (t) => {
    const database = await createTestDatabase();
    t.after(() => database.drop());
    const env = harnessEnv({}, { HANGAR_MAX_CONCURRENT_RUNS: '3' });
    const first = await startTestServer(env, { database });
    t.after(() => first.stop());
    const second = await startTestServer(env, { database, role: 'engine' });
    t.after(() => second.stop());

    const runIds = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        createRun(first, { prompt: script({ say: `run ${i}` }, { sleep: 20 * (i % 3) }) }),
      ),
    );
    for (const runId of runIds)
      assert.equal((await waitForState(first, runId, 'SUCCEEDED', 'FAILED', 'ERROR')).state, 'SUCCEEDED');

    const events = await first.db
      .selectFrom('run_events')
      .select(['run_id', 'event_type', 'occurred_at', 'payload'])
      .where('run_id', 'in', runIds)
      .orderBy('seq')
      .execute();
    const engines = new Set<string>();
    for (const runId of runIds) {
      const own = events.filter((event) => event.run_id === runId);
      assert.equal(
        own.filter((event) => event.event_type === 'run_dispatched').length,
        1,
        `run ${runId} dispatched once`,
      );
      assert.equal(own.filter((event) => event.event_type === 'oz_run_claimed').length, 1, `run ${runId} claimed once`);
      assert.equal(own.filter((event) => event.event_type === 'agent_started').length, 1);
      engines.add((own.find((event) => event.event_type === 'oz_run_claimed')!.payload as { engine: string }).engine);
    }
    // The limit: never more than 3 runs between dispatch and their end, whichever replica held them.
    const edges = events
      .filter((event) => event.event_type === 'run_dispatched' || event.event_type === 'oz_run_done')
      .map((event) => ({
        at: new Date(event.occurred_at).getTime(),
        delta: event.event_type === 'run_dispatched' ? 1 : -1,
      }))
      .sort((a, b) => a.at - b.at || a.delta - b.delta);
    let active = 0;
    let peak = 0;
    for (const edge of edges) peak = Math.max(peak, (active += edge.delta));
    assert.ok(peak <= 3, `at most 3 runs executing at once, saw ${peak}`);
    assert.ok(engines.size >= 1);
  });

  test('a cancel sent to an API replica stops the run on the engine replica', async (t) => {
    const database = await createTestDatabase();
    t.after(() => database.drop());
    const env = harnessEnv({}, {});
    const api = await startTestServer(env, { database, role: 'api' });
    t.after(() => api.stop());
    const engine = await startTestServer(env, { database, role: 'engine' });
    t.after(() => engine.stop());

    const marker = `hangar-replica-cancel-${Date.now()}`;
    const runId = await createRun(api, { prompt: script({ sleepers: marker }, { sleep: 120_000 }) });
    await waitForState(api, runId, 'INPROGRESS');
    await eventually('the harness started its children', () => processesWith(marker).length >= 2);
    assert.equal((await api.request('POST', `/agent/runs/${runId}/cancel`)).status, 200);
    await eventually('the run processes are gone', () => processesWith(marker).length === 0);
    await eventually('the engine replica shut the sandbox down', async () =>
      (await timelineTypes(api, runId)).includes('vm_shutdown'),
    );
    assert.equal((await waitForRun(api, runId, (run) => !run.is_sandbox_running)).state, 'CANCELLED');
  });
});

describe('an engine that dies', () => {
  test('its running run ends ERROR (resource_unavailable, retryable) and its unstarted run is queued again', async (t) => {
    const database = await createTestDatabase();
    t.after(() => database.drop());
    // Setup without network: this test is about the lease. A networked sandbox whose server is killed while its
    // network is still being set up was once seen to outlive the server: a known gap. (Its pasta no longer does:
    // network-server-death.test.ts.)
    const doomed = await spawnKeyedServer(
      database,
      harnessEnv({}, { HANGAR_RUN_LEASE_SECONDS: '3', HANGAR_SETUP_NETWORK: 'false' }),
    );
    t.after(() => stopChild(doomed.child, 'SIGKILL'));
    const create = async (body: unknown) => {
      const response = await doomed.hangar.request('POST', '/agent/runs', { body });
      assert.equal(response.status, 200);
      return response.body.run_id as string;
    };
    const runningMarker = `hangar-doomed-agent-${Date.now()}`;
    const setupMarker = `hangar-doomed-setup-${Date.now()}`;
    const running = await create({ prompt: script({ sleepers: runningMarker }, { sleep: 120_000 }) });
    const environment = await doomed.hangar.request('POST', '/environments', {
      body: { name: 'slow', setup_commands: [`sleep 120 # ${setupMarker}`] },
    });
    const preparing = await create({ prompt: 'x', config: { environment_id: environment.body.uid } });
    await eventually(
      'both runs are under way',
      () => processesWith(runningMarker).length >= 2 && processesWith(setupMarker).length > 0,
    );
    // The agent counts as started once its harness exists and the start is written (a moment later, under load).
    await waitForState(doomed.hangar, running, 'INPROGRESS');

    await stopChild(doomed.child, 'SIGKILL');
    // Whichever the sandbox: bubblewrap's dies with its server (--die-with-parent), and process mode's too
    // (sandbox/server-death.ts).
    await eventually(
      'the sandboxes died with their server',
      () => processesWith(runningMarker).length + processesWith(setupMarker).length === 0,
    ).catch((error) => {
      // Which processes outlived the server, and whose children they are, is what the next reader needs.
      const left = [...processesWith(runningMarker), ...processesWith(setupMarker)];
      throw new Error(`${error.message}; still running:\n${describeProcesses(left)}`);
    });
    const survivor = await startTestServer(doomed.env, { database });
    t.after(async () => {
      await survivor.stop();
      for (const pid of [...processesWith(runningMarker), ...processesWith(setupMarker)]) process.kill(pid, 'SIGKILL');
    });
    const errored = await waitForRun(survivor, running, (run) => run.state === 'ERROR', 60_000).catch(async (error) => {
      throw new Error(`${error.message}\n${doomed.output()}`);
    });
    assert.equal(errored.status_message.error_code, 'resource_unavailable');
    assert.equal(errored.status_message.retryable, true);
    assert.equal(errored.is_sandbox_running, false);
    // The run whose agent had not started went back to the queue and was claimed again by the survivor.
    await eventually(
      'the unstarted run is claimed again',
      async () => {
        const types = await timelineTypes(survivor, preparing);
        return types.includes('run_requeued') && types.filter((type) => type === 'oz_run_claimed').length === 2;
      },
      60_000,
    );
    await survivor.request('POST', `/agent/runs/${preparing}/cancel`);
  });
});
