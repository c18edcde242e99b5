import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ApiError } from '../platform/http/errors.js';
import { MAX_SEARCH_WORDS, searchWords } from './search-words.js';

test('a search is split into its distinct words, in lower case', () => {
  assert.deepEqual(searchWords('Refactr  BILING\trefactr\n'), ['refactr', 'biling']);
  assert.deepEqual(searchWords('skills/deploy'), ['skills/deploy']);
  assert.deepEqual(searchWords('100%_done'), ['100%_done']);
});

test('a search without a word searches for nothing', () => {
  assert.equal(searchWords(undefined), undefined);
  assert.equal(searchWords(''), undefined);
  assert.equal(searchWords(' \t\n '), undefined);
});

test('too many words is a clear 400, not a slow query', () => {
  const words = Array.from({ length: MAX_SEARCH_WORDS }, (_, i) => `word${i}`);
  assert.equal(searchWords(words.join(' '))?.length, MAX_SEARCH_WORDS);
  assert.throws(
    () => searchWords([...words, 'one-more'].join(' ')),
    (error) => error instanceof ApiError && error.status === 400 && /at most 10 words/.test(error.message),
  );
});
