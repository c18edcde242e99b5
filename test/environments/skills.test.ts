import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { GitFixtures, skillFile } from '../support/git.js';
import { createRun } from '../support/runs.js';
import { startTestServer, type TestServer } from '../support/server.js';

let fixtures: GitFixtures;
let hangar: TestServer;
/** A team of its own, so that other tests' environments do not show up in its lists. */
let team: { teamUid: string; apiKey: string };
let environment: { uid: string; name: string };

before(async () => {
  fixtures = new GitFixtures();
  fixtures.createRepo('acme', 'api', {
    '.claude/skills/deploy/SKILL.md': skillFile('deploy', 'Deploy the API', '# Deploy\n\nRun `make deploy`.'),
    '.github/skills/deploy/SKILL.md': skillFile('deploy', 'Deploy from CI'),
    'skills/review-folder/SKILL.md': skillFile('review', 'Review a change'),
    '.codex/skills/no-front-matter/SKILL.md': '# Just text\n',
    '.cursor/skills/bad-yaml/SKILL.md': '---\nname: [oops\ndescription: x\n---\nbody\n',
    '.warp/skills/nameless/SKILL.md': '---\ndescription: No name\n---\nbody\n',
    '.gemini/skills/silent/SKILL.md': '---\nname: silent\n---\nbody\n',
    'docs/skills/elsewhere/SKILL.md': skillFile('elsewhere', 'Not under a skill root'),
    'README.md': '# api\n',
  });
  fixtures.createRepo('acme', 'web', { '.agents/skills/deploy/SKILL.md': skillFile('deploy', 'Deploy the web app') });
  fixtures.createRepo('outside', 'tools', { 'skills/lint/SKILL.md': skillFile('lint', 'Lint everything') });
  hangar = await startTestServer(
    { HANGAR_GIT_BASE_URL: fixtures.baseUrl, HANGAR_GIT_REFRESH_SECONDS: '3600' },
    { role: 'api' },
  );
  team = await hangar.createTeamWithUser();
  const response = await hangar.request('POST', '/api/v1/environments', {
    body: {
      name: 'Backend',
      github_repos: [
        { owner: 'acme', repo: 'api' },
        { owner: 'acme', repo: 'web' },
        { owner: 'acme', repo: 'does-not-exist' },
      ],
    },
    apiKey: team.apiKey,
  });
  assert.equal(response.status, 201, JSON.stringify(response.body));
  environment = { uid: response.body.uid, name: 'Backend' };
});
after(async () => {
  await hangar.stop();
  fixtures.remove();
});

async function agents(query = '', apiKey = team.apiKey) {
  const response = await hangar.request('GET', `/agent${query ? `?${query}` : ''}`, { apiKey });
  assert.equal(response.status, 200, JSON.stringify(response.body));
  return response.body.agents as Array<{ name: string; variants: Array<Record<string, any>> }>;
}

const ids = (list: Awaited<ReturnType<typeof agents>>) =>
  list.flatMap((agent) => agent.variants.map((variant) => variant.id));

describe('agent (skill) list', () => {
  test("skills of the environments' repositories, grouped by name, sorted by name; a broken repository is skipped", async () => {
    const list = await agents();
    assert.deepEqual(
      list.map((agent) => agent.name),
      ['deploy', 'review'],
    );
    const deploy = list[0]!;
    assert.deepEqual(
      deploy.variants.map((variant) => variant.id),
      [
        'acme/api:.claude/skills/deploy/SKILL.md',
        'acme/api:.github/skills/deploy/SKILL.md',
        'acme/web:.agents/skills/deploy/SKILL.md',
      ],
    );
    assert.deepEqual(deploy.variants[0], {
      id: 'acme/api:.claude/skills/deploy/SKILL.md',
      description: 'Deploy the API',
      base_prompt: '# Deploy\n\nRun `make deploy`.',
      source: { owner: 'acme', name: 'api', skill_path: '.claude/skills/deploy/SKILL.md' },
      environments: [environment],
    });
    assert.equal(list[1]!.variants[0]!.id, 'acme/api:skills/review-folder/SKILL.md');
  });

  test('malformed SKILL.md files appear only with include_malformed_skills=true, each with its reason', async () => {
    const list = await agents('include_malformed_skills=true');
    const malformed = new Map(
      list.flatMap((agent) =>
        agent.variants
          .filter((variant) => variant.error)
          .map((variant) => [variant.id, { name: agent.name, error: variant.error }]),
      ),
    );
    assert.deepEqual([...malformed.keys()].sort(), [
      'acme/api:.codex/skills/no-front-matter/SKILL.md',
      'acme/api:.cursor/skills/bad-yaml/SKILL.md',
      'acme/api:.gemini/skills/silent/SKILL.md',
      'acme/api:.warp/skills/nameless/SKILL.md',
    ]);
    assert.match(malformed.get('acme/api:.codex/skills/no-front-matter/SKILL.md')!.error, /no YAML front matter/);
    assert.match(malformed.get('acme/api:.cursor/skills/bad-yaml/SKILL.md')!.error, /not valid YAML/);
    assert.match(malformed.get('acme/api:.warp/skills/nameless/SKILL.md')!.error, /no name/);
    assert.match(malformed.get('acme/api:.gemini/skills/silent/SKILL.md')!.error, /no description/);
    assert.equal(malformed.get('acme/api:.warp/skills/nameless/SKILL.md')!.name, 'nameless', 'named after its folder');
    assert.equal(malformed.get('acme/api:.gemini/skills/silent/SKILL.md')!.name, 'silent');
    // Well-formed variants carry no error member at all.
    assert.ok(list.find((agent) => agent.name === 'review')!.variants.every((variant) => !('error' in variant)));
    assert.equal(ids(await agents('include_malformed_skills=false')).length, 4);
  });

  test('repo= lists one repository, in an environment or not; a malformed spec is 400', async () => {
    assert.deepEqual(ids(await agents('repo=acme/web')), ['acme/web:.agents/skills/deploy/SKILL.md']);
    assert.deepEqual((await agents('repo=acme/web'))[0]!.variants[0]!.environments, [environment]);
    const outside = await agents('repo=outside/tools');
    assert.deepEqual(ids(outside), ['outside/tools:skills/lint/SKILL.md']);
    assert.deepEqual(outside[0]!.variants[0]!.environments, []);
    for (const spec of ['acme', 'acme/', 'a/b/c', '-acme/api', 'acme/..', 'acme/a b']) {
      const response = await hangar.request('GET', `/agent?repo=${encodeURIComponent(spec)}`, { apiKey: team.apiKey });
      assert.equal(response.status, 400, spec);
      assert.equal(response.body.error_code, 'invalid_request');
      assert.match(response.body.detail, /owner\/repo/);
    }
  });

  test('an unknown repository with repo= is 400 naming it, without revealing where repositories come from', async () => {
    const response = await hangar.request('GET', '/agent?repo=acme/does-not-exist', { apiKey: team.apiKey });
    assert.equal(response.status, 400);
    assert.equal(response.body.error_code, 'invalid_request');
    assert.match(response.body.detail, /could not fetch acme\/does-not-exist/);
    assert.ok(!response.body.detail.includes(fixtures.root), response.body.detail);
  });

  test('a new commit shows up with refresh=true, not before (the refresh interval is an hour here)', async () => {
    fixtures.createRepo('acme', 'growing', { 'skills/one/SKILL.md': skillFile('one', 'First') });
    assert.deepEqual(ids(await agents('repo=acme/growing')), ['acme/growing:skills/one/SKILL.md']);
    fixtures.commit('acme', 'growing', {
      'skills/two/SKILL.md': skillFile('two', 'Second'),
      'skills/one/SKILL.md': null,
    });
    assert.deepEqual(ids(await agents('repo=acme/growing')), ['acme/growing:skills/one/SKILL.md']);
    assert.deepEqual(ids(await agents('repo=acme/growing&refresh=true')), ['acme/growing:skills/two/SKILL.md']);
    assert.deepEqual(ids(await agents('repo=acme/growing')), ['acme/growing:skills/two/SKILL.md']);
  });

  test('sort_by=last_run puts the most recently run skill first, counting short specs; variants carry their last run', async () => {
    const other = await hangar.createTeamWithUser();
    await hangar.request('POST', '/api/v1/environments', {
      body: {
        name: 'Both',
        github_repos: [
          { owner: 'acme', repo: 'api' },
          { owner: 'acme', repo: 'web' },
        ],
      },
      apiKey: other.apiKey,
    });
    assert.deepEqual(
      (await agents('sort_by=last_run', other.apiKey)).map((agent) => agent.name),
      ['deploy', 'review'],
      'never run: by name',
    );
    await createRun(hangar, { skill: 'acme/web:.agents/skills/deploy/SKILL.md' }, other.apiKey);
    const reviewRun = await createRun(hangar, { skill: 'api:review' }, other.apiKey);
    const list = await agents('sort_by=last_run', other.apiKey);
    assert.deepEqual(
      list.map((agent) => agent.name),
      ['review', 'deploy'],
    );
    const created = (await hangar.request('GET', `/agent/runs/${reviewRun}`, { apiKey: other.apiKey })).body.created_at;
    assert.equal(list[0]!.variants[0]!.last_run_timestamp, created);
    const deployVariants = new Map(list[1]!.variants.map((variant) => [variant.id, variant.last_run_timestamp]));
    assert.ok(deployVariants.get('acme/web:.agents/skills/deploy/SKILL.md'));
    assert.equal(deployVariants.get('acme/api:.claude/skills/deploy/SKILL.md'), undefined);
    assert.deepEqual(
      (await agents('sort_by=name', other.apiKey)).map((agent) => agent.name),
      ['deploy', 'review'],
    );
    // Another team's runs are not this team's history.
    assert.ok(
      (await agents('sort_by=last_run')).every((agent) =>
        agent.variants.every((variant) => !variant.last_run_timestamp),
      ),
    );
  });

  test("a team without environments lists nothing; it never sees another team's environments", async () => {
    const loner = await hangar.createTeamWithUser();
    assert.deepEqual(await agents('', loner.apiKey), []);
    assert.deepEqual((await agents('repo=acme/api', loner.apiKey))[0]!.variants[0]!.environments, []);
  });

  test('bad query values are 400; no API key is 401', async () => {
    for (const query of ['sort_by=recent', 'refresh=maybe', 'include_malformed_skills=2']) {
      const response = await hangar.request('GET', `/agent?${query}`, { apiKey: team.apiKey });
      assert.equal(response.status, 400, query);
      assert.equal(response.body.error_code, 'invalid_request');
    }
    assert.equal((await hangar.request('GET', '/agent', { apiKey: null })).status, 401);
  });
});
