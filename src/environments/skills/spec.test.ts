import assert from 'node:assert/strict';
import { test } from 'node:test';
import { matchRank, parseSkillSpec, specAliases, specNamesRepo } from './spec.js';

test('the four spec forms parse; others do not', () => {
  assert.deepEqual(parseSkillSpec('api:deploy'), { owner: null, repo: 'api', target: 'deploy', byPath: false });
  assert.deepEqual(parseSkillSpec('acme/api:deploy'), { owner: 'acme', repo: 'api', target: 'deploy', byPath: false });
  assert.deepEqual(parseSkillSpec('api:.claude/skills/deploy/SKILL.md'), {
    owner: null,
    repo: 'api',
    target: '.claude/skills/deploy/SKILL.md',
    byPath: true,
  });
  assert.equal(parseSkillSpec('acme/api:skills/x/SKILL.md')?.owner, 'acme');
  for (const bad of ['deploy', 'api:', ':deploy', 'a/b/c:deploy', '-acme/api:x', 'acme/..:x', 'api:two words']) {
    assert.equal(parseSkillSpec(bad), null, bad);
  }
});

test('a spec names a repository regardless of case; without an owner any owner matches', () => {
  assert.equal(specNamesRepo(parseSkillSpec('API:x')!, { owner: 'acme', repo: 'api' }), true);
  assert.equal(specNamesRepo(parseSkillSpec('Acme/api:x')!, { owner: 'acme', repo: 'api' }), true);
  assert.equal(specNamesRepo(parseSkillSpec('other/api:x')!, { owner: 'acme', repo: 'api' }), false);
});

test('paths match exactly (or their folder); names prefer the front-matter name, then the earlier root', () => {
  const path = parseSkillSpec('api:.claude/skills/deploy/SKILL.md')!;
  assert.equal(matchRank(path, { path: '.claude/skills/deploy/SKILL.md', name: 'x' }), 0);
  assert.equal(
    matchRank(parseSkillSpec('api:.claude/skills/deploy')!, { path: '.claude/skills/deploy/SKILL.md', name: 'x' }),
    0,
  );
  assert.equal(matchRank(path, { path: '.codex/skills/deploy/SKILL.md', name: 'deploy' }), null);

  const name = parseSkillSpec('api:deploy')!;
  const byName = matchRank(name, { path: 'skills/ship/SKILL.md', name: 'deploy' })!;
  const byFolder = matchRank(name, { path: '.agents/skills/deploy/SKILL.md', name: 'release' })!;
  const agents = matchRank(name, { path: '.agents/skills/deploy/SKILL.md', name: 'deploy' })!;
  const claude = matchRank(name, { path: '.claude/skills/deploy/SKILL.md', name: 'deploy' })!;
  assert.ok(agents < claude && claude < byName && byName < byFolder);
  assert.equal(matchRank(name, { path: 'skills/other/SKILL.md', name: 'other' }), null);
});

test('aliases cover the id and the short forms', () => {
  assert.deepEqual(
    specAliases({ owner: 'acme', repo: 'api' }, { path: 'skills/deploy/SKILL.md', name: 'ship' }).sort(),
    [
      'acme/api:deploy',
      'acme/api:ship',
      'acme/api:skills/deploy/SKILL.md',
      'api:deploy',
      'api:ship',
      'api:skills/deploy/SKILL.md',
    ],
  );
});
