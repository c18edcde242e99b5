import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { eventually, harnessEnv, processesWith, script, waitForState } from '../support/engine.js';
import { onPostgres, spawnKeyedServer, stopChild } from '../support/processes.js';
import { createRun } from '../support/runs.js';
import { createTestDatabase, startTestServer } from '../support/server.js';

/**
 * Issue 23 item 7: replicas sharing one workspace root on PostgreSQL kept the workspaces of the executions they were
 * running when killed, forever. Now every engine removes, at start and once per lease, the workspaces no execution
 * uses any more, whichever replica made them, and leaves alone those of executions still running on another replica.
 */
test('the workspace of an execution that died with its replica is removed, and a live replica keeps its own', {
  skip: onPostgres() ? false : 'replicas sharing a workspace root need PostgreSQL (PGlite cleans at start)',
}, async (t) => {
  const database = await createTestDatabase();
  t.after(() => database.drop());
  const env = harnessEnv({}, { HANGAR_RUN_LEASE_SECONDS: '3', HANGAR_SANDBOX: 'process' });
  const root = path.join(database.dataDir, 'workspaces');
  const marker = `hangar-workspace-leak-${process.pid}-${Date.now()}`;
  t.after(() => {
    for (const pid of processesWith(marker)) process.kill(pid, 'SIGKILL');
  });
  const doomed = await spawnKeyedServer(database, env);
  t.after(() => stopChild(doomed.child, 'SIGKILL'));
  const response = await doomed.hangar.request('POST', '/agent/runs', {
    body: { prompt: script({ sleepers: marker }, { sleep: 120_000 }) },
  });
  assert.equal(response.status, 200);
  const lost = response.body.run_id as string;
  const lostWorkspace = path.join(root, `${lost}.1`);
  await eventually('the doomed replica runs its agent', () => processesWith(marker).length >= 2);
  // The agent's start is recorded.
  await waitForState(doomed.hangar, lost, 'INPROGRESS');
  assert.ok(fs.existsSync(lostWorkspace));

  await stopChild(doomed.child, 'SIGKILL');
  // A live replica with a run of its own in progress.
  const live = await startTestServer(doomed.env, { database });
  t.after(() => live.stop());
  const running = await createRun(live, { prompt: script({ sleep: 120_000 }) });
  await waitForState(live, running, 'INPROGRESS');
  const runningWorkspace = path.join(root, `${running}.1`);
  assert.ok(fs.existsSync(runningWorkspace));
  await waitForState(live, lost, 'ERROR');

  // Another replica starting on the same root: by then nothing uses the lost execution's workspace any more.
  const starting = await startTestServer(doomed.env, { database, role: 'engine' });
  t.after(() => starting.stop());
  await eventually('the dead execution’s workspace is removed', () => !fs.existsSync(lostWorkspace));
  assert.ok(fs.existsSync(runningWorkspace), 'the live replica’s workspace stays');
  assert.equal((await waitForState(live, running, 'INPROGRESS')).state, 'INPROGRESS');
  await live.request('POST', `/agent/runs/${running}/cancel`);
});
