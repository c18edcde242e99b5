import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Redactor } from '../../platform/redaction/redactor.js';
import { SplitLineRedaction } from './split-lines.js';

const SECRET = 'sk-live-0123456789';
const text = (value: string) => JSON.stringify({ type: 'text', text: value });

function run(lines: string[]): string[] {
  const redaction = new SplitLineRedaction(new Redactor().add('API_KEY', SECRET));
  const out = lines.flatMap((line) => redaction.push('output', line));
  return [...out, ...redaction.end()].map((line) => line.line);
}

test('a value split across two plain lines is replaced on both sides', () => {
  assert.deepEqual(run(['key: sk-live-01', '23456789 end']), ['key: [REDACTED:API_KEY]', '[REDACTED:API_KEY] end']);
});

test('a value split across two text events (joined by readers) is replaced on both sides', () => {
  assert.deepEqual(run([text('key: sk-live'), text('-0123456789.')]), [
    text('key: [REDACTED:API_KEY]'),
    text('[REDACTED:API_KEY].'),
  ]);
});

test('the line that may start a value is held back until the next line, and released at the end', () => {
  const redaction = new SplitLineRedaction(new Redactor().add('API_KEY', SECRET));
  assert.deepEqual(redaction.push('output', 'a sk-l'), []);
  assert.deepEqual(
    redaction.push('output', 'unrelated').map((line) => line.line),
    ['a sk-l', 'unrelated'],
  );
  assert.deepEqual(redaction.push('output', 'b sk-live'), []);
  assert.deepEqual(
    redaction.end().map((line) => line.line),
    ['b sk-live'],
  );
});

test('the boundary: a side shorter than 4 characters stays, the other side is replaced', () => {
  // 3 characters on the first line: not held back, not replaced; the 15 on the second are.
  assert.deepEqual(run(['key: sk-', 'live-0123456789']), ['key: sk-', '[REDACTED:API_KEY]']);
  // 3 characters on the second line: the first side (15) is replaced, `789` stays.
  assert.deepEqual(run(['key: sk-live-0123456', '789']), ['key: [REDACTED:API_KEY]', '789']);
  // 4 and 14: both replaced.
  assert.deepEqual(run(['key: sk-l', 'ive-0123456789']), ['key: [REDACTED:API_KEY]', '[REDACTED:API_KEY]']);
});

test('lines of other streams are not joined, and a whole value on one line is replaced', () => {
  const redaction = new SplitLineRedaction(new Redactor().add('API_KEY', SECRET));
  const out = [
    ...redaction.push('output', 'x sk-live-01'),
    ...redaction.push('input', '23456789'),
    ...redaction.push('output', `all: ${SECRET}`),
    ...redaction.end(),
  ];
  assert.deepEqual(
    out.map((line) => line.line),
    ['x sk-live-01', '23456789', 'all: [REDACTED:API_KEY]'],
  );
});
