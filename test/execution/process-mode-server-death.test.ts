import assert from 'node:assert/strict';
import { test } from 'node:test';
import { eventually, harnessEnv, processesWith, waitForSignalledRun, waitForState } from '../support/engine.js';
import { spawnKeyedServer, stopChild } from '../support/processes.js';
import { createTestDatabase, startTestServer } from '../support/server.js';

/**
 * Issue 23 item 5: in process mode nothing confines a harness, so a SIGKILLed server used to leave its harnesses
 * running to the end of their agent, while the run was taken back as ERROR, retryable: a client that retried had the
 * work done twice. Now the whole sandbox dies with the server: its leader, what stayed in its process group, and
 * what left the group (setsid) but carries the sandbox's mark.
 */
test('in process mode, a SIGKILLed server takes its harnesses and everything they started along', async (t) => {
  const database = await createTestDatabase();
  t.after(() => database.drop());
  const marker = `hangar-orphan-${process.pid}-${Date.now()}`;
  // $0 puts the marker on each shell's command line; the loops keep them shells (no exec of the last command).
  const loop = `sh -c 'while :; do sleep 1; done' ${marker}`;
  const harness = {
    command: ['sh', '-c', `setsid ${loop} & ${loop} & echo started; wait`, marker],
    output: 'text',
  };
  const doomed = await spawnKeyedServer(
    database,
    harnessEnv({ orphans: harness }, { HANGAR_SANDBOX: 'process', HANGAR_RUN_LEASE_SECONDS: '3' }),
  );
  t.after(() => stopChild(doomed.child, 'SIGKILL'));
  t.after(() => {
    for (const pid of processesWith(marker)) process.kill(pid, 'SIGKILL');
  });
  const response = await doomed.hangar.request('POST', '/agent/runs', {
    body: { prompt: 'x', config: { harness: { type: 'orphans' } } },
  });
  assert.equal(response.status, 200, JSON.stringify(response.body));
  const runId = response.body.run_id as string;
  // The leader, the loop left in its group and the one that started a session of its own; and the start recorded
  // (until then a killed server's run goes back to the queue instead, see agent-start-recorded.test.ts).
  await eventually('the harness and both of its children run', () => processesWith(marker).length >= 3);
  await waitForState(doomed.hangar, runId, 'INPROGRESS');

  await stopChild(doomed.child, 'SIGKILL');
  await eventually('nothing of the sandbox outlives its server', () => processesWith(marker).length === 0);

  // Restarted on the same data: the run is taken back as ERROR, retryable, and no agent of it is still at work.
  const survivor = await startTestServer(doomed.env, { database });
  t.after(() => survivor.stop());
  const errored = await waitForSignalledRun(survivor, runId, (run) => run.state === 'ERROR');
  assert.equal(errored.status_message.retryable, true);
  assert.deepEqual(processesWith(marker), []);
});
