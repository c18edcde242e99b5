import assert from 'node:assert/strict';
import { test } from 'node:test';
import { nextBatchSize } from './retention.js';

test('a timed batch is scaled toward its target duration, at most twice as large as the last, within its bounds', () => {
  // Took twice the target: half as many runs next time.
  assert.equal(nextBatchSize(100, 40, 20, 200), 50);
  // Took a tenth of it: it may grow, but only twofold a batch.
  assert.equal(nextBatchSize(20, 2, 20, 200), 40);
  assert.equal(nextBatchSize(150, 2, 20, 200), 200);
  // However slow, a batch keeps a few runs (below that, its fixed cost is all it does); never more than the most.
  assert.equal(nextBatchSize(10, 10_000, 20, 200), 5);
  assert.equal(nextBatchSize(10, 10_000, 20, 3), 3);
  assert.equal(nextBatchSize(10, 0, 20, 200), 20);
});
