import assert from 'node:assert/strict';
import { test } from 'node:test';
import { phaseScope } from '../../../../test/support/fake-ledger.js';
import { take } from './take.js';

test("the engine's claim already took the run: nothing to write", async () => {
  const { scope, ledger } = phaseScope({ run: { state: 'CLAIMED' } });
  assert.deepEqual(await take(scope), { continue: null });
  assert.deepEqual(ledger.writes, []);
});

test('a worker takes its assigned run from PENDING to CLAIMED, naming itself', async () => {
  const { scope, ledger } = phaseScope({ run: { state: 'PENDING' } });
  assert.deepEqual(await take(scope), { continue: null });
  const { transition } = ledger.of('transition')[0]!;
  assert.deepEqual([transition.from, transition.to], ['PENDING', 'CLAIMED']);
  assert.deepEqual(transition.events, [{ type: 'oz_run_claimed', payload: { engine: 'engine-1' } }]);
});

test("a run no longer the worker's ends the execution with nothing to record", async () => {
  const { scope, ledger } = phaseScope({ run: { state: 'PENDING' } });
  ledger.moves = false;
  assert.deepEqual(await take(scope), { outcome: null });
});
