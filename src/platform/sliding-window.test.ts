import assert from 'node:assert/strict';
import { test } from 'node:test';
import { secondsUntilBelow, slidingCount } from './sliding-window.js';

test('the sliding count weighs the previous minute by the part still inside the window', () => {
  assert.equal(slidingCount(10, 60, 0), 70);
  assert.equal(slidingCount(10, 60, 30), 40);
  assert.equal(slidingCount(10, 60, 60), 10);
});

test('retry-after is when the sliding count is back within the limit', () => {
  // 61 this minute, nothing before, 10 s in: wait for this minute to end and 1/61 of the next.
  const wait = secondsUntilBelow(61, 0, 10, 60);
  assert.equal(wait, 51);
  assert.ok(slidingCount(0, 61, wait - 50) <= 60);
  assert.ok(slidingCount(0, 61, wait - 51) > 60);
  // 30 now and 60 before, 20 s in: the previous minute's share must fall to 30, i.e. at 30 s.
  assert.equal(secondsUntilBelow(30, 60, 20, 60), 10);
  assert.ok(slidingCount(30, 60, 30) <= 60);
  assert.ok(secondsUntilBelow(0, 0, 59.9, 60) >= 1);
});
