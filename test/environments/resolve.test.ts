import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { SkillsService } from '../../src/environments/skills/service.js';
import type { ApiError } from '../../src/platform/http/errors.js';
import { GitFixtures, skillFile } from '../support/git.js';
import { startTestServer, type TestServer } from '../support/server.js';

let fixtures: GitFixtures;
let hangar: TestServer;
let skills: SkillsService;
let team: { teamUid: string; apiKey: string };

async function environment(apiKey: string, name: string, repos: Array<[string, string]>): Promise<string> {
  const response = await hangar.request('POST', '/api/v1/environments', {
    body: { name, github_repos: repos.map(([owner, repo]) => ({ owner, repo })) },
    apiKey,
  });
  assert.equal(response.status, 201, JSON.stringify(response.body));
  return response.body.uid;
}

before(async () => {
  fixtures = new GitFixtures();
  fixtures.createRepo('acme', 'api', {
    '.agents/skills/deploy/SKILL.md': skillFile('deploy', 'Deploy (agents copy)', 'Agents body'),
    '.claude/skills/deploy/SKILL.md': skillFile('deploy', 'Deploy (claude copy)', 'Claude body'),
    'skills/review-folder/SKILL.md': skillFile('review', 'Review a change', 'Look closely.'),
    'skills/broken/SKILL.md': 'no front matter',
  });
  fixtures.createRepo('acme', 'web', { 'skills/deploy/SKILL.md': skillFile('deploy', 'Deploy the web app') });
  fixtures.createRepo('other', 'api', { 'skills/deploy/SKILL.md': skillFile('deploy', 'Their deploy') });
  fixtures.createRepo('acme', 'private', { 'skills/secret/SKILL.md': skillFile('secret', 'Not in any environment') });
  hangar = await startTestServer({ HANGAR_GIT_BASE_URL: fixtures.baseUrl }, { role: 'api' });
  skills = hangar.server.services.skills;
  team = await hangar.createTeamWithUser();
  await environment(team.apiKey, 'Main', [
    ['acme', 'api'],
    ['acme', 'web'],
  ]);
});
after(async () => {
  await hangar.stop();
  fixtures.remove();
});

describe('resolving skill specs for runs', () => {
  test('the four spec forms find the skill in the repositories of the team environments', async () => {
    const review = {
      id: 'acme/api:skills/review-folder/SKILL.md',
      name: 'review',
      description: 'Review a change',
      base_prompt: 'Look closely.',
      full_path: 'skills/review-folder/SKILL.md',
    };
    for (const spec of [
      'api:review',
      'acme/api:review',
      'api:review-folder',
      'api:skills/review-folder/SKILL.md',
      'acme/api:skills/review-folder/SKILL.md',
      'ACME/API:review',
    ]) {
      assert.deepEqual(await skills.resolveSkill(team.teamUid, spec), review, spec);
    }
    assert.equal((await skills.resolveSkill(team.teamUid, 'web:deploy'))?.id, 'acme/web:skills/deploy/SKILL.md');
  });

  test('by name, the earlier skill folder wins; a path picks exactly', async () => {
    const byName = await skills.resolveSkill(team.teamUid, 'api:deploy');
    assert.equal(byName?.id, 'acme/api:.agents/skills/deploy/SKILL.md');
    assert.equal(byName?.base_prompt, 'Agents body');
    const byPath = await skills.resolveSkill(team.teamUid, 'api:.claude/skills/deploy/SKILL.md');
    assert.equal(byPath?.description, 'Deploy (claude copy)');
  });

  test('unknown skills, repositories outside the environments and malformed specs give null', async () => {
    for (const spec of [
      'api:nothing',
      'api:skills/nothing/SKILL.md',
      'private:secret',
      'acme/private:secret',
      'deploy',
      'a/b/c:x',
    ]) {
      assert.equal(await skills.resolveSkill(team.teamUid, spec), null, spec);
    }
    const stranger = await hangar.createTeamWithUser();
    assert.equal(await skills.resolveSkill(stranger.teamUid, 'acme/api:review'), null);
  });

  test('a malformed skill is a 400 naming the problem', async () => {
    await assert.rejects(skills.resolveSkill(team.teamUid, 'api:broken'), (error: ApiError) => {
      assert.equal(error.status, 400);
      assert.match(error.detail, /acme\/api:skills\/broken\/SKILL.md cannot be used: no YAML front matter/);
      return true;
    });
  });

  test('one repository name under two owners is ambiguous without the owner', async () => {
    const both = await hangar.createTeamWithUser();
    await environment(both.apiKey, 'Two apis', [
      ['acme', 'api'],
      ['other', 'api'],
    ]);
    await assert.rejects(skills.resolveSkill(both.teamUid, 'api:deploy'), (error: ApiError) => {
      assert.equal(error.status, 400);
      assert.match(error.detail, /ambiguous.*acme\/api.*other\/api/);
      return true;
    });
    assert.equal((await skills.resolveSkill(both.teamUid, 'other/api:deploy'))?.description, 'Their deploy');
  });

  test('a guest team resolves skills of an environment shared with it', async () => {
    const owner = await hangar.createTeamWithUser();
    const uid = await environment(owner.apiKey, 'Shared', [['acme', 'private']]);
    const guest = await hangar.createTeamWithUser();
    assert.equal(await skills.resolveSkill(guest.teamUid, 'private:secret'), null);
    await hangar.request('POST', `/api/v1/environments/${uid}/guests`, {
      body: { team_uid: guest.teamUid },
      apiKey: owner.apiKey,
    });
    assert.equal(
      (await skills.resolveSkill(guest.teamUid, 'private:secret'))?.id,
      'acme/private:skills/secret/SKILL.md',
    );
  });

  test('a repository that cannot be fetched is a 400 rather than a silent "not found"', async () => {
    const broken = await hangar.createTeamWithUser();
    await environment(broken.apiKey, 'Broken', [['acme', 'gone']]);
    await assert.rejects(skills.resolveSkill(broken.teamUid, 'gone:deploy'), (error: ApiError) => {
      assert.equal(error.status, 400);
      assert.match(error.detail, /could not be looked up: could not fetch acme\/gone/);
      return true;
    });
  });
});
