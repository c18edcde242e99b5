import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseRepoSpec, repoKey } from './github.js';

test('GitHub names: owners and repositories', () => {
  assert.deepEqual(parseRepoSpec('acme/api'), { owner: 'acme', repo: 'api' });
  assert.deepEqual(parseRepoSpec('a-b/x.y_z-1'), { owner: 'a-b', repo: 'x.y_z-1' });
  for (const bad of [
    'acme',
    'acme/',
    '/api',
    'a/b/c',
    '-acme/api',
    'acme-/api',
    'ac--me/api',
    'acme/..',
    'acme/.',
    'acme/a b',
    `${'a'.repeat(40)}/x`,
    `a/${'r'.repeat(101)}`,
  ]) {
    assert.equal(parseRepoSpec(bad), null, bad);
  }
});

test('repository keys ignore case, as GitHub does', () => {
  assert.equal(repoKey({ owner: 'Acme', repo: 'API' }), repoKey({ owner: 'acme', repo: 'api' }));
});
