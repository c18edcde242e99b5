import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cronProblem, nextTickAfter } from './cron.js';

test('accepts 5-field, 6-field and macro expressions', () => {
  for (const expression of [
    '*/5 * * * *',
    '0 9 * * 1-5',
    '* * * * * *',
    '@hourly',
    '@daily',
    '@weekly',
    '@monthly',
    '@yearly',
    '@midnight',
  ]) {
    assert.equal(cronProblem(expression), null, expression);
  }
});

test('explains what is wrong with a bad expression', () => {
  assert.match(cronProblem('61 * * * *')!, /minute/);
  assert.match(cronProblem('* * *')!, /5 fields/);
  assert.match(cronProblem('* * * * * * *')!, /5 fields/);
  assert.match(cronProblem('@reboot')!, /unknown cron macro/);
  assert.match(cronProblem('')!, /empty/);
  assert.match(cronProblem('0 0 30 2 *')!, /never fires/);
  assert.match(cronProblem('banana * * * *')!, /invalid/);
});

test('next ticks are computed in UTC, strictly after the given time', () => {
  assert.equal(
    nextTickAfter('*/5 * * * *', new Date('2026-01-01T00:00:00Z'))?.toISOString(),
    '2026-01-01T00:05:00.000Z',
  );
  assert.equal(
    nextTickAfter('*/5 * * * *', new Date('2026-01-01T00:04:59.999Z'))?.toISOString(),
    '2026-01-01T00:05:00.000Z',
  );
  assert.equal(nextTickAfter('0 9 * * *', new Date('2026-03-29T08:00:00Z'))?.toISOString(), '2026-03-29T09:00:00.000Z');
  assert.equal(nextTickAfter('@daily', new Date('2026-12-31T23:59:59Z'))?.toISOString(), '2027-01-01T00:00:00.000Z');
  assert.equal(
    nextTickAfter('* * * * * *', new Date('2026-01-01T00:00:00.400Z'))?.toISOString(),
    '2026-01-01T00:00:01.000Z',
  );
});
