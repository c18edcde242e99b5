import assert from 'node:assert/strict';
import { test } from 'node:test';
import { retryAfterMs } from './remote-artifacts.js';

test('Retry-After: delay-seconds, an HTTP date, or 2 s when it says nothing usable', () => {
  const now = Date.parse('2026-12-01T12:00:00Z');
  assert.equal(retryAfterMs('2', now), 2000);
  assert.equal(retryAfterMs(' 0 ', now), 0);
  assert.equal(retryAfterMs('Tue, 01 Dec 2026 12:00:05 GMT', now), 5000);
  assert.equal(retryAfterMs('Tue, 01 Dec 2026 11:59:00 GMT', now), 0);
  assert.equal(retryAfterMs(null, now), 2000);
  assert.equal(retryAfterMs('soon', now), 2000);
  assert.equal(retryAfterMs('-1', now), 2000);
});
