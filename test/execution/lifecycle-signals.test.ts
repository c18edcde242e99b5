// The run lifecycle's in-process signals (src/runs/lifecycle/signals.ts): one per committed move, after its commit,
// typed by what happened; what the tests' waits (test/support/engine.ts waitForState) are woken by.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { RunLifecycle } from '../../src/runs/lifecycle/run-lifecycle.js';
import { type RunSignal, runSignals } from '../../src/runs/lifecycle/signals.js';
import { OPERATOR_CANCELLABLE_STATES } from '../../src/runs/lifecycle/states.js';
import { harnessEnv, script, waitForState } from '../support/engine.js';
import { createRun } from '../support/runs.js';
import { startTestServer, type TestServer } from '../support/server.js';

describe('lifecycle signals', () => {
  let hangar: TestServer;
  let seen: Array<RunSignal & { committed: string | undefined }>;
  let stop: () => void;

  before(async () => {
    hangar = await startTestServer(harnessEnv());
    seen = [];
    // The state each signal's run has in the database when the signal arrives: the move has committed by then.
    stop = runSignals.on((signal) => {
      const entry = { ...signal, committed: undefined as string | undefined };
      seen.push(entry);
      void hangar.db
        .selectFrom('runs')
        .select('state')
        .where('id', '=', signal.runId)
        .executeTakeFirst()
        .then((row) => {
          entry.committed = row?.state;
        });
    });
  });
  after(async () => {
    stop();
    await hangar.stop();
  });

  const of = (runId: string) =>
    seen.filter((signal) => signal.runId === runId).map(({ type, state, transition }) => ({ type, state, transition }));

  test('a run is signalled as it is created, claimed, started and ends, each after its commit', async () => {
    const runId = await createRun(hangar, { prompt: script({ sleep: 300 }, { say: 'done' }) });
    await waitForState(hangar, runId, 'SUCCEEDED');
    assert.deepEqual(of(runId), [
      { type: 'run:created', state: 'QUEUED', transition: undefined },
      { type: 'run:claimed', state: 'CLAIMED', transition: 'claim' },
      { type: 'run:started', state: 'INPROGRESS', transition: 'start' },
      { type: 'run:ended', state: 'SUCCEEDED', transition: 'succeed' },
    ]);
    // The run sleeps between its start and its end: the start's read saw the start committed.
    const started = seen.find((signal) => signal.runId === runId && signal.type === 'run:started')!;
    assert.equal(started.committed, 'INPROGRESS');
  });

  test('a follow-up queues an ended run again, and a cancel ends it', async () => {
    const runId = await createRun(hangar, { prompt: script({ say: 'first' }) });
    await waitForState(hangar, runId, 'SUCCEEDED');
    const followup = await hangar.request('POST', `/agent/runs/${runId}/followups`, {
      body: { message: script({ sleep: 120_000 }) },
    });
    assert.equal(followup.status, 200, JSON.stringify(followup.body));
    await waitForState(hangar, runId, 'INPROGRESS');
    assert.equal((await hangar.request('POST', `/agent/runs/${runId}/cancel`)).status, 200);
    await waitForState(hangar, runId, 'CANCELLED');
    assert.deepEqual(of(runId).slice(4), [
      { type: 'run:queued', state: 'QUEUED', transition: 'restart' },
      { type: 'run:claimed', state: 'CLAIMED', transition: 'claim' },
      { type: 'run:started', state: 'INPROGRESS', transition: 'start' },
      { type: 'run:ended', state: 'CANCELLED', transition: 'cancel' },
    ]);
  });

  test('a move in a transaction is signalled once it commits, and never when it rolls back', async () => {
    const lifecycle = new RunLifecycle(hangar.db);
    const queued = async () => {
      const runId = await createRun(hangar, { prompt: script({ say: 'x' }), config: { worker_host: 'nobody-here' } });
      await waitForState(hangar, runId, 'QUEUED');
      return runId;
    };
    const rolledBack = await queued();
    await assert.rejects(
      lifecycle.inTransaction(async (inside) => {
        assert.equal(await inside.cancel('operator', rolledBack, 'a test', OPERATOR_CANCELLABLE_STATES), true);
        assert.deepEqual(of(rolledBack).slice(1), [], 'nothing is signalled before the commit');
        throw new Error('roll back');
      }),
      /roll back/,
    );
    assert.deepEqual(of(rolledBack).slice(1), []);

    const committed = await queued();
    await lifecycle.inTransaction(async (inside) => {
      await inside.cancel('operator', committed, 'a test', OPERATOR_CANCELLABLE_STATES);
      assert.deepEqual(of(committed).slice(1), [], 'nothing is signalled before the commit');
    });
    assert.deepEqual(of(committed).slice(1), [
      { type: 'run:ended', state: 'CANCELLED', transition: 'operator_cancel' },
    ]);
  });
});
