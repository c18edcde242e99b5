import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { rfc3339 } from './time.js';

/** How PostgreSQL writes a timestamptz in JSON in a UTC session: as many fraction digits as needed, or none. */
function postgresJson(date: Date, micros: number): string {
  const fraction = `${String(date.getUTCMilliseconds()).padStart(3, '0')}${String(micros).padStart(3, '0')}`.replace(
    /0+$/,
    '',
  );
  return `${date.toISOString().slice(0, 19)}${fraction ? `.${fraction}` : ''}+00:00`;
}

test('PostgreSQL UTC text renders exactly as a Date of it would', () => {
  const dates = fc.date({
    min: new Date('1970-01-01T00:00:00Z'),
    max: new Date('9999-12-31T23:59:59Z'),
    noInvalidDate: true,
  });
  fc.assert(
    fc.property(dates, fc.integer({ min: 0, max: 999 }), (date, micros) => {
      const text = postgresJson(date, micros);
      assert.equal(rfc3339(text), new Date(text).toISOString(), text);
    }),
  );
});

test('other offsets and Dates go through Date', () => {
  assert.equal(rfc3339('2026-11-24T01:57:00.5+05:30'), '2026-11-23T20:27:00.500Z');
  assert.equal(rfc3339('2026-11-24T01:57:00Z'), '2026-11-24T01:57:00.000Z');
  assert.equal(rfc3339(new Date('2026-11-24T01:57:00.123Z')), '2026-11-24T01:57:00.123Z');
});
