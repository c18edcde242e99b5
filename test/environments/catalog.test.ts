import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { RepoRef } from '../../src/environments/github.js';
import { SkillCatalog } from '../../src/environments/skills/catalog.js';
import { GitFetchError, GitMirror } from '../../src/environments/skills/git.js';
import { GitFixtures, skillFile } from '../support/git.js';

/** Real git, with a count of what it was asked to do. */
class CountingMirror extends GitMirror {
  fetches = 0;
  reads = 0;
  override async fetchHead(ref: RepoRef): Promise<string> {
    this.fetches++;
    return super.fetchHead(ref);
  }
  override async readFile(ref: RepoRef, commit: string, filePath: string): Promise<string> {
    this.reads++;
    return super.readFile(ref, commit, filePath);
  }
}

let fixtures: GitFixtures;
let cacheDir: string;
before(() => {
  fixtures = new GitFixtures();
  cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-git-cache-'));
});
after(() => {
  fixtures.remove();
  fs.rmSync(cacheDir, { recursive: true, force: true });
});

function catalogAt(clock: { now: number }, refreshSeconds = 60) {
  const git = new CountingMirror({ baseUrl: fixtures.baseUrl, cacheDir });
  return { git, catalog: new SkillCatalog({ git, refreshSeconds, now: () => clock.now }) };
}

describe('skill catalog', () => {
  test('skills are read once per revision and fetched again only after the refresh interval', async () => {
    const ref = { owner: 'acme', repo: 'cached' };
    const first = fixtures.createRepo('acme', 'cached', { 'skills/one/SKILL.md': skillFile('one', 'First') });
    const clock = { now: 1_000_000 };
    const { git, catalog } = catalogAt(clock);

    const initial = await catalog.skillsOf(ref, { refresh: false });
    assert.equal(initial.commit, first);
    assert.deepEqual(
      initial.skills.map((skill) => skill.name),
      ['one'],
    );
    assert.deepEqual([git.fetches, git.reads], [1, 1]);

    const second = fixtures.commit('acme', 'cached', { 'skills/two/SKILL.md': skillFile('two', 'Second') });
    clock.now += 59_000;
    assert.equal(
      (await catalog.skillsOf(ref, { refresh: false })).commit,
      first,
      'within the interval the cached revision is served',
    );
    assert.deepEqual([git.fetches, git.reads], [1, 1]);

    clock.now += 1_000;
    const later = await catalog.skillsOf(ref, { refresh: false });
    assert.equal(later.commit, second);
    assert.deepEqual(later.skills.map((skill) => skill.name).sort(), ['one', 'two']);
    assert.deepEqual([git.fetches, git.reads], [2, 3]);

    clock.now += 60_000;
    await catalog.skillsOf(ref, { refresh: false });
    assert.deepEqual([git.fetches, git.reads], [3, 3], 'a fetch that finds the same commit reuses the parsed skills');

    await catalog.skillsOf(ref, { refresh: true });
    assert.deepEqual([git.fetches, git.reads], [4, 5], 'refresh fetches at once and clears the parsed skills');
  });

  test('concurrent requests share one fetch', async () => {
    fixtures.createRepo('acme', 'busy', { 'skills/x/SKILL.md': skillFile('x', 'X') });
    const { git, catalog } = catalogAt({ now: 0 });
    const results = await Promise.all(
      Array.from({ length: 5 }, () => catalog.skillsOf({ owner: 'acme', repo: 'busy' }, { refresh: false })),
    );
    assert.equal(new Set(results.map((result) => result.commit)).size, 1);
    assert.equal(git.fetches, 1);
  });

  test('an unknown repository is a GitFetchError that does not show the base URL', async () => {
    const { catalog } = catalogAt({ now: 0 });
    await assert.rejects(catalog.skillsOf({ owner: 'acme', repo: 'missing' }, { refresh: false }), (error: Error) => {
      assert.ok(error instanceof GitFetchError);
      assert.match(error.message, /could not fetch acme\/missing/);
      assert.ok(!error.message.includes(fixtures.root), error.message);
      return true;
    });
  });

  test('a failed first fetch is not retried within the interval, unless a refresh asks for it', async () => {
    const ref = { owner: 'acme', repo: 'late' };
    const clock = { now: 0 };
    const { git, catalog } = catalogAt(clock);
    await assert.rejects(catalog.skillsOf(ref, { refresh: false }), GitFetchError);
    fixtures.createRepo('acme', 'late', { 'skills/x/SKILL.md': skillFile('x', 'X') });
    await assert.rejects(catalog.skillsOf(ref, { refresh: false }), GitFetchError);
    assert.equal(git.fetches, 1);
    assert.equal((await catalog.skillsOf(ref, { refresh: true })).skills.length, 1);
    assert.equal(git.fetches, 2);

    const other = { owner: 'acme', repo: 'later' };
    await assert.rejects(catalog.skillsOf(other, { refresh: false }), GitFetchError);
    fixtures.createRepo('acme', 'later', { 'skills/y/SKILL.md': skillFile('y', 'Y') });
    clock.now += 60_000;
    assert.equal((await catalog.skillsOf(other, { refresh: false })).skills.length, 1);
  });

  test('when a later fetch fails, the last fetched revision is served with a warning', async () => {
    const ref = { owner: 'acme', repo: 'vanishing' };
    const commit = fixtures.createRepo('acme', 'vanishing', { 'skills/x/SKILL.md': skillFile('x', 'X') });
    const clock = { now: 0 };
    const { catalog } = catalogAt(clock);
    await catalog.skillsOf(ref, { refresh: false });
    fs.rmSync(path.join(fixtures.root, 'acme', 'vanishing'), { recursive: true });
    const served = await catalog.skillsOf(ref, { refresh: true });
    assert.equal(served.commit, commit);
    assert.deepEqual(
      served.skills.map((skill) => skill.name),
      ['x'],
    );
    assert.match(served.warning ?? '', /could not fetch acme\/vanishing.*earlier/);
  });

  test('symlinks, oversized files and files outside the skill folders are not skills', async () => {
    fixtures.createRepo('acme', 'odd', {
      'skills/big/SKILL.md': `---\nname: big\ndescription: Big\n---\n${'x'.repeat(300 * 1024)}`,
      'skills/ok/SKILL.md': skillFile('ok', 'Fine'),
      'docs/skills/elsewhere/SKILL.md': skillFile('elsewhere', 'Not a skill root'),
      'skills/ok/README.md': 'not a skill',
    });
    const linked = path.join(fixtures.root, '.work', 'acme', 'odd', 'skills', 'linked');
    fs.mkdirSync(linked);
    fs.symlinkSync('../ok/SKILL.md', path.join(linked, 'SKILL.md'));
    fixtures.commit('acme', 'odd', {}, 'add a symlink');
    const { catalog } = catalogAt({ now: 0 });
    const { skills } = await catalog.skillsOf({ owner: 'acme', repo: 'odd' }, { refresh: false });
    assert.deepEqual(
      skills.map((skill) => [skill.path, skill.error]),
      [
        ['skills/big/SKILL.md', 'the file is larger than 256 KiB'],
        ['skills/ok/SKILL.md', null],
      ],
    );
  });
});
