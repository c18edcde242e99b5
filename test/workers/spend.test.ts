import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { harnessEnv, script, waitForState } from '../support/engine.js';
import { stopChild } from '../support/processes.js';
import { createRun } from '../support/runs.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { startWorker, type WorkerProcess, waitForConnections } from '../support/workers.js';

// A run continued on a self-hosted worker: the worker's execution is told what the earlier ones spent (the
// assignment's usage_before), so the run's cap is on its total there too (issue 29).
let hangar: TestServer;
let worker: WorkerProcess;

before(async () => {
  hangar = await startTestServer(harnessEnv());
  worker = startWorker(hangar, 'box-spend', { env: harnessEnv() });
  await waitForConnections(hangar, 'box-spend', 1);
});
after(async () => {
  if (worker?.child.exitCode === null) await stopChild(worker.child, 'SIGKILL');
  await hangar?.stop();
});

test("a worker's second execution of a run stops at the run's cap, counting the first one's spend", async () => {
  // 0.01 USD an execution, a cap of 0.015: the first stays under it, the second takes the run past it.
  const runId = await createRun(hangar, {
    prompt: script({ usage: true }, { done: 'ok' }),
    config: { worker_host: 'box-spend', max_cost_usd: 0.015 },
  });
  const first = await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR');
  assert.equal(first.state, 'SUCCEEDED', JSON.stringify(first.status_message));
  const followup = await hangar.request('POST', `/agent/runs/${runId}/followups`, { body: { message: 'again' } });
  assert.equal(followup.status, 200, JSON.stringify(followup.body));
  const second = await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR');
  assert.equal(second.state, 'FAILED', JSON.stringify(second.status_message));
  assert.equal(second.status_message.error_code, 'budget_exceeded');
  assert.match(second.status_message.message, /spend cap of 0\.015 USD .* spent 0\.0200 USD/);
  assert.equal(second.request_usage.inference_cost, 0.02);
  assert.equal(second.request_usage.input_tokens, 20);
});
