import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { harnessEnv, script, waitForState } from '../support/engine.js';
import { startTestServer, type TestServer } from '../support/server.js';

// Issue 26: with no model key and no operator file every run stayed QUEUED without a word.
describe('a waiting run says why', () => {
  describe('on a server that can run nothing', () => {
    let hangar: TestServer;
    before(async () => {
      hangar = await startTestServer();
    });
    after(() => hangar.stop());

    test('the create answer, GET and the list name what to set', async () => {
      const created = await hangar.request('POST', '/agent/runs', { body: { prompt: 'hi' } });
      assert.equal(created.status, 200);
      assert.equal(created.body.state, 'QUEUED');
      assert.equal(created.body.queue_reason.code, 'no_harness');
      assert.match(created.body.queue_reason.message, /ANTHROPIC_API_KEY/);
      assert.match(created.body.queue_reason.message, /HANGAR_CONFIG=examples\/hangar\.yaml/);
      const run = await hangar.request('GET', `/agent/runs/${created.body.run_id}`);
      assert.deepEqual(run.body.queue_reason, created.body.queue_reason);
      const list = await hangar.request('GET', '/agent/runs');
      const item = list.body.runs.find((entry: any) => entry.run_id === created.body.run_id);
      assert.deepEqual(item.queue_reason, created.body.queue_reason);
    });

    test('a run for a self-hosted worker that is not connected names the worker', async () => {
      const created = await hangar.request('POST', '/agent/runs', {
        body: { prompt: 'hi', config: { worker_host: 'build-box' } },
      });
      assert.equal(created.body.queue_reason.code, 'waiting_for_worker');
      assert.match(created.body.queue_reason.message, /build-box.*no worker of that host is connected/);
      assert.match(created.body.queue_reason.message, /hangar worker --worker-id build-box/);
    });
  });

  describe('on a server whose team is at its limit', () => {
    let hangar: TestServer;
    before(async () => {
      hangar = await startTestServer(harnessEnv({}, { HANGAR_MAX_CONCURRENT_RUNS_PER_TEAM: '1' }));
    });
    after(() => hangar.stop());

    test('team_at_capacity names the setting; the reason is gone once the run starts, and on ended runs', async () => {
      const blocker = (await hangar.request('POST', '/agent/runs', { body: { prompt: script({ sleep: 120_000 }) } }))
        .body.run_id;
      const running = await waitForState(hangar, blocker, 'INPROGRESS');
      assert.equal(running.queue_reason, undefined);
      const created = await hangar.request('POST', '/agent/runs', { body: { prompt: script({ say: 'later' }) } });
      assert.equal(created.body.queue_reason.code, 'team_at_capacity');
      assert.match(created.body.queue_reason.message, /HANGAR_MAX_CONCURRENT_RUNS_PER_TEAM\) is 1/);
      assert.equal((await hangar.request('POST', `/agent/runs/${blocker}/cancel`)).status, 200);
      const done = await waitForState(hangar, created.body.run_id, 'SUCCEEDED');
      assert.equal(done.queue_reason, undefined);
    });
  });
});
