import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type SnapshotInputs, snapshotKeys, touchesLockfile } from './key.js';

const inputs: SnapshotInputs = {
  image: 'host:',
  sandbox: 'bwrap',
  commits: { 'acme/app': 'a'.repeat(40), 'acme/lib': 'b'.repeat(40) },
  setupCommands: ['npm ci'],
  setupNetwork: true,
  variables: {},
};

test('the key changes with every input; the base key with all but the commits', () => {
  const { key, baseKey } = snapshotKeys(inputs);
  const changes: Array<[string, Partial<SnapshotInputs>, boolean]> = [
    ['image', { image: 'host:node:22' }, true],
    ['sandbox', { sandbox: 'process' }, true],
    ['setup command', { setupCommands: ['npm install'] }, true],
    ['setup command order', { setupCommands: ['npm ci', 'true'] }, true],
    ['setup network', { setupNetwork: false }, true],
    ["the environment's setup network", { setupReach: 'off' }, true],
    ["the environment's setup allow list", { setupReach: { allow: [{ host: 'registry.npmjs.org' }] } }, true],
    ['a variable value', { variables: { NODE_ENV: 'test' } }, true],
    ['a repository', { commits: { 'acme/app': 'a'.repeat(40) } }, true],
    ['a commit', { commits: { 'acme/app': 'c'.repeat(40), 'acme/lib': 'b'.repeat(40) } }, false],
  ];
  for (const [what, change, baseChanges] of changes) {
    const changed = snapshotKeys({ ...inputs, ...change });
    assert.notEqual(changed.key, key, `${what} changes the key`);
    assert.equal(changed.baseKey !== baseKey, baseChanges, `${what} ${baseChanges ? 'changes' : 'keeps'} the base key`);
  }
  // Environments that name no setup network keep the keys they had before it was an input.
  assert.equal(snapshotKeys({ ...inputs, setupReach: undefined }).key, key);
  // The order repositories are listed in is not an input.
  const reordered = snapshotKeys({ ...inputs, commits: { 'acme/lib': 'b'.repeat(40), 'acme/app': 'a'.repeat(40) } });
  assert.equal(reordered.key, key);
});

test('lockfiles anywhere in the tree count; other files do not', () => {
  assert.ok(touchesLockfile(['src/index.ts', 'packages/web/package-lock.json']));
  assert.ok(touchesLockfile(['Cargo.lock']));
  assert.ok(!touchesLockfile(['src/index.ts', 'docs/package-lock.json.md', 'README.md']));
  assert.ok(!touchesLockfile([]));
});
