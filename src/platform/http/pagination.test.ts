import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CursorCodec, InvalidCursorError } from './pagination.js';

const codec = new CursorCodec('test-key');

test('a cursor round-trips for its own ordering', () => {
  const cursor = codec.encode({ ordering: 'updated_at:desc', values: ['2026-01-01T00:00:00.123456Z', 'abc'] });
  assert.deepEqual(codec.decode(cursor, 'updated_at:desc'), ['2026-01-01T00:00:00.123456Z', 'abc']);
});

test('a cursor from another ordering is refused', () => {
  const cursor = codec.encode({ ordering: 'title:asc', values: ['a', 'b'] });
  assert.throws(() => codec.decode(cursor, 'title:desc'), InvalidCursorError);
});

test('an altered cursor is refused', () => {
  const cursor = codec.encode({ ordering: 'title:asc', values: ['a', 'b'] });
  const [payload, mac] = cursor.split('.');
  const forged = Buffer.from(JSON.stringify(['title:asc', ['z', 'b']])).toString('base64url');
  assert.throws(() => codec.decode(`${forged}.${mac}`, 'title:asc'), InvalidCursorError);
  assert.throws(() => codec.decode(`${payload}.AAAA`, 'title:asc'), InvalidCursorError);
  assert.throws(() => codec.decode('garbage', 'title:asc'), InvalidCursorError);
  assert.throws(() => new CursorCodec('other-key').decode(cursor, 'title:asc'), InvalidCursorError);
});
