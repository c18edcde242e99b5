import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { openValue, parseSecretKey, sealValue } from './crypto.js';

test('a secret key is read from 64 hex characters or from base64 of 32 bytes', () => {
  const key = randomBytes(32);
  assert.deepEqual(parseSecretKey(key.toString('hex')), key);
  assert.deepEqual(parseSecretKey(key.toString('hex').toUpperCase()), key);
  assert.deepEqual(parseSecretKey(key.toString('base64')), key);
  assert.deepEqual(parseSecretKey(key.toString('base64url')), key);
  assert.deepEqual(parseSecretKey(` ${key.toString('base64')}\n`), key, 'a key file ends with a newline');
  for (const bad of [
    '',
    'short',
    randomBytes(16).toString('hex'),
    randomBytes(31).toString('base64'),
    randomBytes(33).toString('base64'),
    'x'.repeat(64),
    'not base64!',
  ]) {
    assert.equal(parseSecretKey(bad), null, bad);
  }
});

test('sealing round-trips, with a fresh IV every time', () => {
  const key = randomBytes(32);
  const first = sealValue(key, 'hunter2 ✓', 'team/NAME');
  const second = sealValue(key, 'hunter2 ✓', 'team/NAME');
  assert.equal(first.iv.length, 12);
  assert.equal(first.authTag.length, 16);
  assert.notDeepEqual(first.iv, second.iv);
  assert.notDeepEqual(first.ciphertext, second.ciphertext);
  assert.equal(openValue(key, first, 'team/NAME'), 'hunter2 ✓');
  assert.equal(openValue(key, second, 'team/NAME'), 'hunter2 ✓');
});

test('a wrong key, another context, an altered byte or a shortened tag do not decrypt', () => {
  const key = randomBytes(32);
  const sealed = sealValue(key, 'the value', 'team-a/TOKEN');
  assert.throws(() => openValue(randomBytes(32), sealed, 'team-a/TOKEN'));
  assert.throws(() => openValue(key, sealed, 'team-b/TOKEN'));
  assert.throws(() => openValue(key, sealed, 'team-a/OTHER'));
  const altered = Buffer.from(sealed.ciphertext);
  altered[0]! ^= 1;
  assert.throws(() => openValue(key, { ...sealed, ciphertext: altered }, 'team-a/TOKEN'));
  assert.throws(() => openValue(key, { ...sealed, authTag: sealed.authTag.subarray(0, 8) }, 'team-a/TOKEN'));
});
