import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { onPostgres, spawnKeyedServer, stopChild, waitForExit } from '../support/processes.js';
import { createTestDatabase } from '../support/server.js';

/** Clients creating runs at once; the kill lands while the others still have requests in flight. */
const CLIENTS = 4;
/** Acknowledged creates per round before the server is killed. */
const KILL_AFTER = 40;
const ROUNDS = 2;

interface Acknowledged {
  runId: string;
  prompt: string;
}

test('every run acknowledged with 200 survives a SIGKILL mid-stream and a restart on the same data', async (t) => {
  const database = await createTestDatabase();
  t.after(() => database.drop());
  const lockFile = path.join(database.dataDir, 'pglite.lock');

  const acknowledged: Acknowledged[] = [];
  let attempted = 0;
  let server = await spawnKeyedServer(database);
  // Each restart with the key of the first start.
  const { env, headers } = server;
  t.after(() => stopChild(server.child, 'SIGKILL'));

  for (let round = 0; round < ROUNDS; round++) {
    const ackedThisRound: Acknowledged[] = [];
    const unexpected: string[] = [];
    let killed = false;
    const victim = server.child;

    const client = async (clientIndex: number) => {
      for (let i = 0; ; i++) {
        const prompt = `durability round ${round} client ${clientIndex} #${i}`;
        attempted++;
        let status: number;
        let body: { run_id?: string };
        try {
          const response = await fetch(`${server.url}/api/v1/agent/runs`, {
            method: 'POST',
            headers,
            body: JSON.stringify({ prompt, metadata: { round: String(round) } }),
          });
          status = response.status;
          body = (await response.json()) as { run_id?: string };
        } catch {
          // The server is gone (refused, reset, or cut off mid-response): nothing was acknowledged.
          if (!killed) unexpected.push(`request failed before the kill (${prompt})`);
          return;
        }
        if (status !== 200 || typeof body.run_id !== 'string') {
          unexpected.push(`HTTP ${status} ${JSON.stringify(body)}`);
          return;
        }
        ackedThisRound.push({ runId: body.run_id, prompt });
        if (ackedThisRound.length >= KILL_AFTER && !killed) {
          killed = true;
          victim.kill('SIGKILL');
        }
      }
    };
    await Promise.all(Array.from({ length: CLIENTS }, (_, index) => client(index)));
    assert.deepEqual(unexpected, []);
    assert.ok(killed);
    assert.deepEqual(await waitForExit(victim), { code: null, signal: 'SIGKILL' });
    assert.ok(ackedThisRound.length >= KILL_AFTER);
    acknowledged.push(...ackedThisRound);

    if (!onPostgres()) {
      // The killed process could not release its lock: the restart must take it over.
      assert.equal(fs.readFileSync(lockFile, 'utf8').trim(), String(victim.pid), 'the dead process left its lock file');
    }
    server = await spawnKeyedServer(database, env);
    if (!onPostgres()) assert.equal(fs.readFileSync(lockFile, 'utf8').trim(), String(server.child.pid));

    for (const run of acknowledged) {
      const response = await fetch(`${server.url}/api/v1/agent/runs/${run.runId}`, { headers });
      assert.equal(response.status, 200, `run ${run.runId} (${run.prompt}) was acknowledged but is lost`);
      const item = (await response.json()) as { run_id: string; prompt: string; state: string };
      assert.equal(item.run_id, run.runId);
      assert.equal(item.prompt, run.prompt);
      assert.equal(item.state, 'QUEUED');
    }
  }

  // Nothing duplicated: the list holds each acknowledged run once, plus at most the unacknowledged attempts.
  const listed: string[] = [];
  let cursor: string | undefined;
  do {
    const query = new URLSearchParams({ limit: '500', sort_by: 'created_at', ...(cursor ? { cursor } : {}) });
    const response = await fetch(`${server.url}/api/v1/agent/runs?${query}`, { headers });
    assert.equal(response.status, 200);
    const page = (await response.json()) as { runs: Array<{ run_id: string }>; page_info: { next_cursor?: string } };
    listed.push(...page.runs.map((run) => run.run_id));
    cursor = page.page_info.next_cursor;
  } while (cursor);
  assert.equal(new Set(listed).size, listed.length, 'a run is listed twice');
  const listedSet = new Set(listed);
  for (const run of acknowledged) assert.ok(listedSet.has(run.runId), `run ${run.runId} is missing from the list`);
  assert.ok(listed.length <= attempted, `${listed.length} runs listed but only ${attempted} creates were sent`);
  t.diagnostic(`${attempted} creates sent, ${acknowledged.length} acknowledged, ${listed.length} stored`);

  // The recovered database takes writes.
  const created = await fetch(`${server.url}/api/v1/agent/runs`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ prompt: 'after recovery' }),
  });
  assert.equal(created.status, 200);
  assert.deepEqual(await stopChild(server.child), { code: 0, signal: null });
});
