import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mergeMetadata, metadataFilterFromQuery, metadataProblem } from './metadata.js';
import { cancelRefusal, isRunTypeCancellable } from './state.js';
import { deriveTitle } from './title.js';

const hosted = { source: 'API', execution_location: 'REMOTE', worker_host: null };

test('metadata keys, values and count are checked', () => {
  assert.equal(metadataProblem({ 'team.name_1-x': 'ok' }), null);
  assert.equal(metadataProblem({ a: '' }), null);
  assert.match(metadataProblem({ '': 'x' })!, /1-64/);
  assert.match(metadataProblem({ 'has space': 'x' })!, /1-64/);
  assert.match(metadataProblem({ ['k'.repeat(65)]: 'x' })!, /1-64/);
  assert.equal(metadataProblem({ k: 'é'.repeat(128) }), null);
  assert.match(metadataProblem({ k: 'é'.repeat(129) })!, /256 bytes/);
  assert.match(metadataProblem({ k: 'a\0b' })!, /NUL/);
  const tooMany = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, 'v']));
  assert.match(metadataProblem(tooMany)!, /at most 20/);
});

test('request metadata wins over the parent, which wins over automatic keys', () => {
  assert.deepEqual(mergeMetadata({ a: 'auto', b: 'auto' }, { b: 'parent', c: 'parent' }, { c: 'request' }), {
    a: 'auto',
    b: 'parent',
    c: 'request',
  });
});

test('metadata filters are read from deepObject query keys', () => {
  assert.deepEqual(metadataFilterFromQuery({ 'metadata[env]': 'prod', limit: '5' }), { env: 'prod' });
  assert.equal(metadataFilterFromQuery({ limit: '5' }), null);
});

test('titles come from the first line of the prompt', () => {
  assert.equal(deriveTitle('\n  Fix   the bug \nmore', null), 'Fix the bug');
  const long = deriveTitle('word '.repeat(40), null);
  assert.ok(long.length <= 80 && long.endsWith('…'));
  assert.equal(deriveTitle('', 'acme/repo:deploy'), 'Run skill acme/repo:deploy');
});

test('cancel follows the interface table', () => {
  assert.equal(cancelRefusal({ ...hosted, state: 'QUEUED' }), null);
  assert.equal(cancelRefusal({ ...hosted, state: 'INPROGRESS' }), null);
  assert.equal(cancelRefusal({ ...hosted, state: 'PENDING' })?.status, 409);
  assert.equal(cancelRefusal({ ...hosted, state: 'PENDING' })?.retryable, true);
  for (const state of ['SUCCEEDED', 'FAILED', 'ERROR', 'BLOCKED', 'CANCELLED']) {
    assert.equal(cancelRefusal({ ...hosted, state })?.code, 'invalid_request');
  }
  assert.equal(cancelRefusal({ ...hosted, worker_host: 'box-1', state: 'QUEUED' })?.status, 422);
  assert.equal(cancelRefusal({ ...hosted, source: 'GITHUB_ACTION', state: 'SUCCEEDED' })?.status, 422);
  assert.equal(isRunTypeCancellable({ ...hosted, execution_location: 'LOCAL' }), false);
});
