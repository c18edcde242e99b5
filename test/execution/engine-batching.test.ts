// The engine's per-run statements coalesce across its executions, whichever ledger object each execution writes
// through (issue 54). Every run writes through a redacting ledger of its own, made with Object.create over the
// engine's; the agent-start batcher was a field the engine's ledger set lazily (`this.starts ??= ...`), which through
// a run's ledger landed on that run's object, so each run had a batcher of its own and every agent start cost a
// statement (1.00 per run in the dispatch drain, beside 0.2 for all the other writes). Counted by statement, which
// no load of the machine changes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DatabaseLedger, EngineWrites } from '../../src/execution/index.js';
import { redactingLedger } from '../../src/execution/redaction/index.js';
import { Redactor } from '../../src/platform/redaction/redactor.js';
import { RunLifecycle } from '../../src/runs/index.js';
import { harnessEnv, script } from '../support/engine.js';
import { createRun } from '../support/runs.js';
import { startTestServer } from '../support/server.js';

const RUNS = 8;

/** A part of the engine's ledger that this test never reaches: any use of it fails the test. */
function unused<T extends object>(name: string): T {
  return new Proxy({} as T, {
    get: () => {
      throw new Error(`the test used the ledger's ${name}`);
    },
  });
}

test(`${RUNS} executions starting their agents at once: one statement for all their start intents`, async (t) => {
  // No engine of the server's own: the test claims the runs as the engine whose ledger it builds.
  const hangar = await startTestServer(harnessEnv(), { role: 'api' });
  t.after(() => hangar.stop());
  const engineId = 'engine-batching-test';
  const lifecycle = new RunLifecycle(hangar.db);
  const batches: number[] = [];
  const beginAgentStarts = lifecycle.beginAgentStarts.bind(lifecycle);
  lifecycle.beginAgentStarts = (owner, starts) => {
    batches.push(starts.length);
    return beginAgentStarts(owner, starts);
  };
  for (let i = 0; i < RUNS; i++) await createRun(hangar, { prompt: script({ say: `run ${i}` }) });
  const claimed = await lifecycle.claim(engineId, 60, { global: RUNS, perTeam: RUNS }, RUNS);
  assert.equal(claimed.length, RUNS);

  const ledger = new DatabaseLedger({
    db: hangar.db,
    lifecycle,
    engineId,
    writes: new EngineWrites(lifecycle, engineId, { retryForMs: 0 }),
    environments: unused('environments'),
    tokens: unused('tokens'),
    apiUrl: () => hangar.apiUrl,
    artifacts: unused('artifacts'),
    maxArtifactBytes: 1024,
    readSecret: async () => null,
    mcpServer: unused('mcpServer'),
  });
  // Each execution's own ledger, as the executor makes it (redactedContext).
  const waiting = await Promise.all(
    claimed.map((run) => redactingLedger(ledger, new Redactor()).beginAgentStart!(run.id, run.execution_id)),
  );
  assert.deepEqual(
    waiting,
    claimed.map(() => []),
  );
  assert.deepEqual(batches, [RUNS], 'one statement for every start');
  const marked = await hangar.db
    .selectFrom('runs')
    .select(['id', 'execution_id', 'agent_start_intent'])
    .where(
      'id',
      'in',
      claimed.map((run) => run.id),
    )
    .execute();
  for (const run of marked) assert.equal(run.agent_start_intent, run.execution_id, 'every intent was recorded');
});
