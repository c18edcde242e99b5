import assert from 'node:assert/strict';
import { test } from 'node:test';
import { eventually, harnessEnv, outputTexts, script, timelineTypes, waitForState } from '../support/engine.js';
import { stopChild } from '../support/processes.js';
import { createRun } from '../support/runs.js';
import { createTestDatabase, freePort, startTestServer } from '../support/server.js';
import { startWorker, waitForConnections } from '../support/workers.js';

test('a worker rides out a server restart: it reconnects, keeps its run, and what it reported meanwhile lands once', {
  timeout: 120_000,
}, async (t) => {
  const database = await createTestDatabase();
  const port = String(await freePort());
  const apiKey = 'hgr_reconnect_test_key_0123456789';
  // Long leases: the run must outlive the restart without being taken back.
  const env = harnessEnv({}, { PORT: port, HANGAR_BOOTSTRAP_API_KEY: apiKey, HANGAR_RUN_LEASE_SECONDS: '60' });
  let hangar = await startTestServer(env, { database });
  const worker = startWorker(hangar, 'box-restart', { env: harnessEnv() });
  t.after(async () => {
    await stopChild(worker.child, 'SIGKILL');
    await hangar.stop();
    await database.drop();
  });
  await waitForConnections(hangar, 'box-restart', 1);

  const runId = await createRun(hangar, {
    prompt: script({ say: 'before' }, { sleep: 4000 }, { say: 'after' }),
    config: { worker_host: 'box-restart' },
  });
  await eventually('the harness started', async () =>
    (await outputTexts(hangar, runId).catch((): string[] => [])).includes('before'),
  );
  await hangar.stop();
  // The harness finishes while the server is down; the worker keeps its report until it can send it. Nothing tells
  // of that end meanwhile (the worker's 'task finished' waits for the server's answer): time for it.
  await new Promise((resolve) => setTimeout(resolve, 5000));
  hangar = await startTestServer(env, { database });

  const run = await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR');
  assert.equal(run.state, 'SUCCEEDED', JSON.stringify(run.status_message));
  assert.deepEqual(await outputTexts(hangar, runId), ['before', 'after']);
  const types = await timelineTypes(hangar, runId);
  assert.equal(types.filter((type) => type === 'oz_run_done').length, 1);
  assert.equal(types.filter((type) => type === 'run_dispatched').length, 1, 'assigned once');
  assert.match(worker.output(), /reconnecting/);
});
