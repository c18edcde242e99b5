import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { generateApiKey } from '../../src/platform/crypto.js';
import { eventually, harnessEnv, processesWith, script, waitForState } from '../support/engine.js';
import { databaseEnv, onPostgres, stopChild } from '../support/processes.js';
import { createRun } from '../support/runs.js';
import { createTestDatabase, spawnServer, startTestServer } from '../support/server.js';

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
  const apiKey = generateApiKey();
  const env = {
    ...harnessEnv({}, { HANGAR_RUN_LEASE_SECONDS: '3', HANGAR_SANDBOX: 'process' }),
    ...databaseEnv(database),
    HANGAR_BOOTSTRAP_API_KEY: apiKey,
  };
  const root = path.join(database.dataDir, 'workspaces');
  const marker = `hangar-workspace-leak-${process.pid}-${Date.now()}`;
  t.after(() => {
    for (const pid of processesWith(marker)) process.kill(pid, 'SIGKILL');
  });
  const doomed = await spawnServer(env);
  t.after(() => stopChild(doomed.child, 'SIGKILL'));
  const response = await fetch(`${doomed.url}/api/v1/agent/runs`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ prompt: script({ sleepers: marker }, { sleep: 120_000 }) }),
  });
  assert.equal(response.status, 200);
  const lost = ((await response.json()) as { run_id: string }).run_id;
  const lostWorkspace = path.join(root, `${lost}.1`);
  await eventually('the doomed replica runs its agent', () => processesWith(marker).length >= 2);
  await eventually('the agent’s start is recorded', async () => {
    const run = await fetch(`${doomed.url}/api/v1/agent/runs/${lost}`, {
      headers: { authorization: `Bearer ${apiKey}` },
    });
    return ((await run.json()) as { state: string }).state === 'INPROGRESS';
  });
  assert.ok(fs.existsSync(lostWorkspace));

  await stopChild(doomed.child, 'SIGKILL');
  // A live replica with a run of its own in progress.
  const live = await startTestServer(env, { database });
  t.after(() => live.stop());
  const running = await createRun(live, { prompt: script({ sleep: 120_000 }) });
  await waitForState(live, running, 'INPROGRESS');
  const runningWorkspace = path.join(root, `${running}.1`);
  assert.ok(fs.existsSync(runningWorkspace));
  await waitForState(live, lost, 'ERROR');

  // Another replica starting on the same root: by then nothing uses the lost execution's workspace any more.
  const starting = await startTestServer(env, { database, role: 'engine' });
  t.after(() => starting.stop());
  await eventually('the dead execution’s workspace is removed', () => !fs.existsSync(lostWorkspace));
  assert.ok(fs.existsSync(runningWorkspace), 'the live replica’s workspace stays');
  assert.equal((await waitForState(live, running, 'INPROGRESS')).state, 'INPROGRESS');
  await live.request('POST', `/agent/runs/${running}/cancel`);
});
