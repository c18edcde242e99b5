import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { resolveSandboxMode } from '../../src/execution/sandbox/index.js';
import {
  eventually,
  harnessEnv,
  outputTexts,
  processesWith,
  script,
  timelineTypes,
  waitForRun,
  waitForState,
} from '../support/engine.js';
import { createRun } from '../support/runs.js';
import { startTestServer, type TestServer } from '../support/server.js';

const bwrapWorks = resolveSandboxMode(undefined).mode.kind === 'bwrap';

for (const sandbox of ['bwrap', 'process'] as const) {
  describe(`cancel kills the whole process tree (${sandbox} sandbox)`, {
    skip: sandbox === 'bwrap' && !bwrapWorks ? 'bubblewrap does not work on this machine' : false,
  }, () => {
    let hangar: TestServer;
    before(async () => {
      hangar = await startTestServer(harnessEnv({}, { HANGAR_SANDBOX: sandbox }));
    });
    after(() => hangar.stop());

    test('a running run: CANCELLED, its processes gone, the sandbox cleaned', async () => {
      const marker = `hangar-cancel-${sandbox}-${Date.now()}`;
      const runId = await createRun(hangar, { prompt: script({ sleepers: marker }, { sleep: 120_000 }) });
      await waitForState(hangar, runId, 'INPROGRESS');
      await eventually('the harness started its children', async () =>
        (await outputTexts(hangar, runId).catch((): string[] => [])).includes('sleepers started'),
      );
      assert.ok(processesWith(marker).length >= 2, 'the grandchildren run');
      const running = await waitForState(hangar, runId, 'INPROGRESS');
      assert.equal(running.is_sandbox_running, true);

      const response = await hangar.request('POST', `/agent/runs/${runId}/cancel`);
      assert.equal(response.status, 200);
      assert.equal(response.body, runId);
      await eventually('every process of the run is gone', () => processesWith(marker).length === 0);
      await eventually('the sandbox is shut down', async () =>
        (await timelineTypes(hangar, runId)).includes('vm_shutdown'),
      );
      const run = await waitForRun(hangar, runId, (run) => run.is_sandbox_running === false);
      assert.equal(run.state, 'CANCELLED');
      const types = await timelineTypes(hangar, runId);
      assert.ok(types.includes('oz_run_cancelled'));
      assert.ok(!types.includes('oz_run_done') && !types.includes('oz_run_failed'), types.join());
      await eventually(
        'the workspace is removed',
        async () => (await import('node:fs')).readdirSync(`${hangar.dataDir}/workspaces`).length === 0,
      );
    });
  });
}

describe('cancel during environment setup', () => {
  let hangar: TestServer;
  before(async () => {
    hangar = await startTestServer(harnessEnv());
  });
  after(() => hangar.stop());

  test('the setup command is killed and the agent never starts', async () => {
    const marker = `hangar-setup-${Date.now()}`;
    const created = await hangar.request('POST', '/api/v1/environments', {
      body: { name: 'slow', setup_commands: [`sleep 120 # ${marker}`] },
    });
    assert.equal(created.status, 201);
    const runId = await createRun(hangar, { prompt: 'x', config: { environment_id: created.body.uid } });
    await eventually('the setup command runs', () => processesWith(marker).length > 0);
    const run = await waitForState(hangar, runId, 'CLAIMED');
    assert.equal(run.is_run_type_cancellable, true);
    assert.equal((await hangar.request('POST', `/agent/runs/${runId}/cancel`)).status, 200);
    await eventually('the setup command is gone', () => processesWith(marker).length === 0);
    await eventually('the sandbox is shut down', async () =>
      (await timelineTypes(hangar, runId)).includes('vm_shutdown'),
    );
    const types = await timelineTypes(hangar, runId);
    assert.ok(!types.includes('agent_started'));
    assert.equal((await waitForState(hangar, runId, 'CANCELLED')).state, 'CANCELLED');
    // A cancelled setup says nothing about the environment.
    assert.equal((await hangar.request('GET', `/api/v1/environments/${created.body.uid}`)).body.setup_failed, false);
  });
});
