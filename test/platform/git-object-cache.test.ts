import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { GitFetchError, GitObjectCache } from '../../src/platform/git/object-cache.js';
import { GitFixtures } from '../support/git.js';

const git = new GitFixtures();
const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-git-cache-'));
after(() => {
  git.remove();
  fs.rmSync(cacheDir, { recursive: true, force: true });
});

test('executions that ask at once share one fetch; a later one fetches what changed', async () => {
  const first = git.createRepo('acme', 'shared', { 'a.txt': 'a\n' });
  const cache = GitObjectCache.shared(cacheDir, 1024 * 1024 * 1024);
  const url = `${git.baseUrl}/acme/shared`;
  const [one, two] = [cache.update('acme/shared', url), cache.update('acme/shared', url)];
  assert.equal(one, two, 'the second caller joins the fetch in flight');
  assert.equal((await one).head, first);
  const second = git.commit('acme', 'shared', { 'b.txt': 'b\n' });
  assert.equal((await cache.update('acme/shared', url)).head, second);
  assert.deepEqual(await cache.changedPaths('acme/shared', first, second), ['b.txt']);
  // The mirror keeps no URL (a base URL may carry credentials).
  assert.doesNotMatch(fs.readFileSync(path.join(cache.mirrorPath('acme/shared'), 'config'), 'utf8'), /url =/);
});

test('a repository that cannot be fetched is a GitFetchError naming it, never its URL', async () => {
  const cache = GitObjectCache.shared(cacheDir, 1024 * 1024 * 1024);
  await assert.rejects(cache.update('acme/missing', `${git.baseUrl}/acme/missing`), (error: Error) => {
    assert.ok(error instanceof GitFetchError);
    assert.match(error.message, /acme\/missing/);
    assert.ok(!error.message.includes(git.root), error.message);
    return true;
  });
});

test('past its size bound the cache drops the least recently used mirrors, never one in use', async () => {
  const small = path.join(cacheDir, 'small');
  // Unbounded while the mirrors are made (each fetch may start an eviction pass), then bounded to one byte.
  const cache = GitObjectCache.shared(small, 1024 * 1024 * 1024);
  for (const name of ['old', 'used', 'new']) {
    git.createRepo('lru', name, { 'f.txt': `${name}\n` });
    await cache.update(`lru/${name}`, `${git.baseUrl}/lru/${name}`);
    // Distinct use times, oldest first (the mark's modification time orders them).
    const mark = path.join(cache.mirrorPath(`lru/${name}`), 'hangar-last-used');
    const when = new Date(Date.now() - (name === 'old' ? 3 : name === 'used' ? 2 : 1) * 60_000);
    fs.utimesSync(mark, when, when);
  }
  GitObjectCache.shared(small, 1);
  let removed = 0;
  await cache.reading('lru/used', async () => {
    removed = await cache.evict(true);
  });
  assert.equal(removed, 2, 'a bound of one byte leaves only the mirror in use');
  assert.ok(fs.existsSync(cache.mirrorPath('lru/used')));
  assert.ok(!fs.existsSync(cache.mirrorPath('lru/old')) && !fs.existsSync(cache.mirrorPath('lru/new')));
  execFileSync('git', ['-C', cache.mirrorPath('lru/used'), 'fsck', '--no-progress'], { stdio: 'ignore' });
});
