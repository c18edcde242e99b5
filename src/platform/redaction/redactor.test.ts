import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MIN_REDACTED_LENGTH, Redactor } from './redactor.js';

test('values are replaced by their name, as they are and JSON-escaped, the longest first', () => {
  const redactor = new Redactor().add('TOKEN', 'abcd"efgh').add('LONG', 'abcd"efgh-and-more').add('KEY', 'sk-12345678');
  assert.equal(redactor.text('x sk-12345678 y'), 'x [REDACTED:KEY] y');
  assert.equal(redactor.text(JSON.stringify({ t: 'abcd"efgh!' })), '{"t":"[REDACTED:TOKEN]!"}');
  assert.equal(redactor.text('abcd"efgh-and-more'), '[REDACTED:LONG]');
  assert.deepEqual(redactor.deep({ a: ['sk-12345678'], n: 3, b: { c: 'no' } }), {
    a: ['[REDACTED:KEY]'],
    n: 3,
    b: { c: 'no' },
  });
});

test(`values shorter than ${MIN_REDACTED_LENGTH} characters are left alone; ${MIN_REDACTED_LENGTH} are redacted`, () => {
  const short = 'x'.repeat(MIN_REDACTED_LENGTH - 1);
  const exact = 'y'.repeat(MIN_REDACTED_LENGTH);
  const redactor = new Redactor().add('SHORT', short).add('EXACT', exact);
  assert.equal(redactor.text(`${short} ${exact}`), `${short} [REDACTED:EXACT]`);
});

test('the first name given for a value is the one shown; an unchanged object is returned as it is', () => {
  const redactor = new Redactor().add('FIRST', 'same-value-1').add('SECOND', 'same-value-1');
  assert.equal(redactor.text('same-value-1'), '[REDACTED:FIRST]');
  const value = { a: 'nothing here' };
  assert.equal(redactor.deep(value), value);
});

test('objects without a prototype, and the bare ones Fastify parses query strings into, are redacted like any other', () => {
  const redactor = new Redactor().add('KEY', 'sk-12345678');
  // fast-querystring's objects (new Empty(), Empty.prototype = Object.create(null)): their prototype has none.
  for (const bare of [Object.create(null), Object.create(Object.create(null))]) {
    const query = Object.assign(bare, { filename: 'sk-12345678.txt', nested: { a: 'x sk-12345678' } });
    assert.deepEqual(
      { ...redactor.deep(query) },
      {
        filename: '[REDACTED:KEY].txt',
        nested: { a: 'x [REDACTED:KEY]' },
      },
    );
  }
  const date = new Date(0);
  assert.equal(redactor.deep({ when: date }).when, date, 'class instances are left alone');
});
