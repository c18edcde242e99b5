import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { eventually, harnessEnv, outputTexts, script, timelineTypes, waitForState } from '../support/engine.js';
import { stopChild, waitForExit } from '../support/processes.js';
import { createRun } from '../support/runs.js';
import { startTestServer, type TestServer } from '../support/server.js';
import {
  connectedWorkers,
  refusedUpgrade,
  startWorker,
  type WorkerProcess,
  waitForConnections,
} from '../support/workers.js';

describe('self-hosted workers: connecting, presence and routing', () => {
  let hangar: TestServer;
  const workers: WorkerProcess[] = [];
  const worker = (id: string, options: Parameters<typeof startWorker>[2] = {}) => {
    const started = startWorker(hangar, id, { env: harnessEnv(), ...options });
    workers.push(started);
    return started;
  };

  before(async () => {
    hangar = await startTestServer(harnessEnv());
  });
  after(async () => {
    for (const started of workers) if (started.child.exitCode === null) await stopChild(started.child, 'SIGKILL');
    await hangar.stop();
  });

  test('the websocket refuses a bad key (401), a member key (403), another team (403) and a bad worker ID (400) as plain HTTP, before the upgrade', async () => {
    assert.equal((await refusedUpgrade(hangar, 'box', null)).status, 401);
    const badKey = await refusedUpgrade(hangar, 'box', 'hk_wrong');
    assert.equal(badKey.status, 401);
    assert.equal(badKey.body.error_code, 'authentication_required');
    assert.ok(badKey.closed, 'the server closes the connection it refused');
    const memberKey = await refusedUpgrade(hangar, 'box', hangar.apiKey);
    assert.equal(memberKey.status, 403, 'an API key is not a worker key');
    assert.match(memberKey.body.detail, /needs a worker key/);
    const other = await hangar.createTeamWithUser();
    const notMember = await refusedUpgrade(hangar, 'box', hangar.workerKey, { 'x-team-uid': other.teamUid });
    assert.equal(notMember.status, 403, 'a worker key of another team than the one named');
    assert.equal(notMember.body.error_code, 'not_authorized');
    for (const id of ['', 'warp', 'warp-box', 'WARP9']) {
      const refused = await refusedUpgrade(hangar, id, hangar.workerKey);
      assert.equal(refused.status, 400, `worker_id "${id}"`);
      assert.equal(refused.body.error_code, 'invalid_request');
      assert.ok(refused.closed);
    }
  });

  test('the worker CLI stops with a clear message when the server refuses it', async () => {
    const refused = worker('box-refused', { apiKey: 'hk_not_a_key_at_all_000000' });
    const exit = await waitForExit(refused.child);
    assert.equal(exit.code, 3);
    assert.match(refused.output(), /refused this worker \(HTTP 401\)/);
    const warp = worker('warp-box');
    assert.equal((await waitForExit(warp.child)).code, 2);
    assert.match(warp.output(), /must not start with "warp"/);
  });

  test('connected workers are listed per team with their connection count', async () => {
    worker('box-presence');
    worker('box-presence');
    await waitForConnections(hangar, 'box-presence', 2);
    const listed = (await connectedWorkers(hangar)).find((entry) => entry.worker_host === 'box-presence') as any;
    assert.ok(Date.parse(listed.connected_at) <= Date.parse(listed.last_seen_at));
    const other = await hangar.createTeamWithUser();
    assert.deepEqual(await connectedWorkers(hangar, other.apiKey), [], 'another team sees none of them');
  });

  test("a run naming a worker runs on that worker only; the server's engine takes the others", async () => {
    worker('box-routing');
    await waitForConnections(hangar, 'box-routing', 1);
    const onWorker = await createRun(hangar, {
      prompt: script({ say: 'hello from the worker' }, { usage: true }),
      config: { worker_host: 'box-routing' },
    });
    const onServer = await createRun(hangar, { prompt: script({ say: 'hello from the server' }) });
    const done = await waitForState(hangar, onWorker, 'SUCCEEDED', 'FAILED', 'ERROR');
    assert.equal(done.state, 'SUCCEEDED', JSON.stringify(done.status_message));
    assert.equal((await waitForState(hangar, onServer, 'SUCCEEDED', 'FAILED', 'ERROR')).state, 'SUCCEEDED');
    assert.deepEqual(await outputTexts(hangar, onWorker), ['hello from the worker']);
    assert.equal(done.request_usage?.total_tokens, 15);

    const claims = await hangar.db
      .selectFrom('run_events')
      .select(['run_id', 'payload'])
      .where('event_type', '=', 'oz_run_claimed')
      .where('run_id', 'in', [onWorker, onServer])
      .execute();
    assert.deepEqual(claims.find((claim) => claim.run_id === onWorker)?.payload, { worker_host: 'box-routing' });
    assert.ok(
      (
        claims.find((claim) => claim.run_id === onServer)?.payload as { engine?: string } | undefined
      )?.engine?.startsWith('engine-'),
    );
    const types = await timelineTypes(hangar, onWorker);
    for (const type of [
      'run_dispatched',
      'oz_run_claimed',
      'worker_container_ready',
      'agent_started',
      'vm_shutdown',
      'oz_run_done',
    ]) {
      assert.ok(types.includes(type), `timeline has ${type}: ${types.join(', ')}`);
    }
  });

  test("an agent identity's worker_host is the default; the run's own config.worker_host wins", async () => {
    const created = await hangar.request('POST', '/agent/identities', {
      body: { name: 'Box bot', worker_host: 'box-identity' },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const identity = created.body.uid;
    const defaulted = await createRun(hangar, { prompt: script({ say: 'x' }), agent_identity_uid: identity });
    const overridden = await createRun(hangar, {
      prompt: script({ say: 'y' }),
      agent_identity_uid: identity,
      config: { worker_host: 'warp' },
    });
    const rows = await hangar.db
      .selectFrom('runs')
      .select(['id', 'worker_host'])
      .where('id', 'in', [defaulted, overridden])
      .execute();
    assert.equal(rows.find((row) => row.id === defaulted)?.worker_host, 'box-identity');
    assert.equal(rows.find((row) => row.id === overridden)?.worker_host, null);
    assert.equal((await waitForState(hangar, overridden, 'SUCCEEDED', 'FAILED')).state, 'SUCCEEDED');
    worker('box-identity');
    assert.equal((await waitForState(hangar, defaulted, 'SUCCEEDED', 'FAILED', 'ERROR')).state, 'SUCCEEDED');
  });

  test('follow-ups reach a running harness on the worker live, and the conversation records them', async () => {
    worker('box-followups');
    const runId = await createRun(hangar, {
      prompt: script({ say: 'listening' }, { listen: true }, { done: 'listened' }),
      config: { worker_host: 'box-followups', harness: { type: 'listener' } },
    });
    await eventually('the harness listens', async () =>
      (await outputTexts(hangar, runId).catch((): string[] => [])).includes('listening'),
    );
    for (const message of ['hello there', 'bye']) {
      const response = await hangar.request('POST', `/agent/runs/${runId}/followups`, { body: { message } });
      assert.equal(response.status, 200, JSON.stringify(response.body));
    }
    assert.equal((await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR')).state, 'SUCCEEDED');
    assert.deepEqual(await outputTexts(hangar, runId), ['listening', 'heard: hello there', 'heard: bye']);
    const conversation = await hangar.request('GET', `/agent/runs/${runId}/conversation`);
    assert.equal(conversation.body.steps.length, 1, 'one execution: the follow-ups went to the running harness');
  });

  test('a run for a worker that is not connected waits in QUEUED until it connects', async () => {
    const runId = await createRun(hangar, { prompt: script({ say: 'late' }), config: { worker_host: 'box-later' } });
    // That it stays queued can only be watched for a while: no event tells of a run not claimed.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    assert.equal((await waitForState(hangar, runId, 'QUEUED', 'SUCCEEDED')).state, 'QUEUED');
    worker('box-later');
    assert.equal((await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR')).state, 'SUCCEEDED');
  });

  test('cancelling a self-hosted run through the API is 422 operation_not_supported', async () => {
    const runId = await createRun(hangar, { prompt: script({ say: 'x' }), config: { worker_host: 'box-nobody' } });
    const response = await hangar.request('POST', `/agent/runs/${runId}/cancel`);
    assert.equal(response.status, 422);
    assert.equal(response.body.error_code, 'operation_not_supported');
  });

  test('a worker at its limit takes one task at a time; the others wait and then run', async () => {
    worker('box-limit', { args: ['--max-concurrent-tasks', '1'] });
    await waitForConnections(hangar, 'box-limit', 1);
    const runIds = await Promise.all(
      [1, 2, 3].map((i) =>
        createRun(hangar, {
          prompt: script({ sleep: 300 }, { say: `task ${i}` }),
          config: { worker_host: 'box-limit' },
        }),
      ),
    );
    let peak = 0;
    await eventually('all three done', async () => {
      const runs = await hangar.db.selectFrom('runs').select('state').where('id', 'in', runIds).execute();
      peak = Math.max(peak, runs.filter((run) => ['PENDING', 'CLAIMED', 'INPROGRESS'].includes(run.state)).length);
      return runs.every((run) => run.state === 'SUCCEEDED');
    });
    assert.equal(peak, 1);
  });
});
