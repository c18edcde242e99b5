import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { hangarCli } from '../support/cli.js';
import { GitFixtures, skillFile } from '../support/git.js';
import { startTestServer, type TestServer } from '../support/server.js';

let fixtures: GitFixtures;
let hangar: TestServer;
before(async () => {
  fixtures = new GitFixtures();
  fixtures.createRepo('acme', 'api', {
    'skills/deploy/SKILL.md': skillFile('deploy', 'Deploy the API'),
    'skills/broken/SKILL.md': 'no front matter',
  });
  hangar = await startTestServer({ HANGAR_GIT_BASE_URL: fixtures.baseUrl }, { role: 'api' });
});
after(async () => {
  await hangar.stop();
  fixtures.remove();
});

/** The real `hangar` CLI against the test server, as the team of `apiKey` (the default team unless given). */
function cli(args: string[], apiKey = hangar.apiKey) {
  return hangarCli(args, { url: hangar.url, apiKey });
}

async function json(args: string[], apiKey?: string): Promise<any> {
  const result = await cli([...args, '--json'], apiKey);
  assert.equal(result.code, 0, result.stderr);
  return JSON.parse(result.stdout);
}

describe('hangar environments and hangar skills', () => {
  test('create, get, list, update, delete', async () => {
    const created = await json([
      'environments',
      'create',
      '--name',
      'CLI env',
      '--description',
      'made by the CLI',
      '--image',
      'node:20',
      '--repo',
      'acme/api',
      '--setup',
      'npm ci',
      '--setup',
      'npm test',
      '--retention',
      '10',
    ]);
    assert.match(created.uid, /^[A-Za-z0-9]{22}$/);
    assert.deepEqual(created.config, {
      name: 'CLI env',
      description: 'made by the CLI',
      docker_image: 'node:20',
      github_repos: [{ owner: 'acme', repo: 'api' }],
      setup_commands: ['npm ci', 'npm test'],
      failure_session_retention_minutes: 10,
    });
    assert.deepEqual(await json(['environments', 'get', created.uid]), created);

    const listed = await cli(['environments', 'list']);
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, new RegExp(`^${created.uid}\\s+CLI env\\s+owner\\s+.*acme/api`, 'm'));
    const sorted = await json(['environments', 'list', '--sort', 'name', '--json']);
    assert.ok(sorted.environments.some((environment: { uid: string }) => environment.uid === created.uid));

    const updated = await json(['environments', 'update', created.uid, '--name', 'Renamed']);
    assert.deepEqual(updated.config, {
      name: 'Renamed',
      description: '',
      github_repos: [],
      setup_commands: [],
      failure_session_retention_minutes: null,
    });

    const deleted = await cli(['environments', 'delete', created.uid]);
    assert.equal(deleted.code, 0, deleted.stderr);
    assert.match(deleted.stdout, /Deleted environment/);
    const missing = await cli(['environments', 'get', created.uid]);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /HTTP 404/);
  });

  test('bad input is refused with the reason', async () => {
    const badRepo = await cli(['environments', 'create', '--name', 'x', '--repo', 'just-a-name']);
    assert.notEqual(badRepo.code, 0);
    assert.match(badRepo.stderr, /owner\/repo/);
    const badRetention = await cli(['environments', 'create', '--name', 'x', '--retention', '90']);
    assert.equal(badRetention.code, 1);
    assert.match(badRetention.stderr, /HTTP 400.*failure_session_retention_minutes/);
    const noName = await cli(['environments', 'create']);
    assert.notEqual(noName.code, 0);
    assert.match(noName.stderr, /--name/);
  });

  test('share, unshare, share-link and join', async () => {
    const { uid } = await json(['environments', 'create', '--name', 'To share']);
    const guest = await hangar.createTeamWithUser();
    const shared = await json(['environments', 'share', uid, guest.teamUid]);
    assert.deepEqual(
      shared.sharing.guests.map((entry: { team_uid: string }) => entry.team_uid),
      [guest.teamUid],
    );
    assert.equal((await json(['environments', 'get', uid], guest.apiKey)).access, 'guest');
    const unshared = await cli(['environments', 'unshare', uid, guest.teamUid]);
    assert.equal(unshared.code, 0, unshared.stderr);
    assert.equal((await cli(['environments', 'get', uid], guest.apiKey)).code, 1);

    const { token } = await json(['environments', 'share-link', uid]);
    const joined = await json(['environments', 'join', token], guest.apiKey);
    assert.equal(joined.uid, uid);
    assert.equal(joined.access, 'link');
    const { token: rotated } = await json(['environments', 'share-link', uid]);
    assert.notEqual(rotated, token);
    const stale = await cli(['environments', 'join', token], (await hangar.createTeamWithUser()).apiKey);
    assert.equal(stale.code, 1);
    assert.match(stale.stderr, /HTTP 404/);
  });

  test('skills list, with --repo, --include-malformed and --json', async () => {
    const team = await hangar.createTeamWithUser();
    await json(['environments', 'create', '--name', 'With skills', '--repo', 'acme/api'], team.apiKey);
    const plain = await cli(['skills', 'list'], team.apiKey);
    assert.equal(plain.code, 0, plain.stderr);
    assert.match(
      plain.stdout,
      /^SKILL\s+SPEC\s+DESCRIPTION\ndeploy\s+acme\/api:skills\/deploy\/SKILL.md\s+Deploy the API\n$/,
    );
    const malformed = await cli(
      ['skills', 'list', '--include-malformed', '--refresh', '--sort', 'last_run'],
      team.apiKey,
    );
    assert.match(malformed.stdout, /broken\s+acme\/api:skills\/broken\/SKILL.md\s+MALFORMED: no YAML front matter/);
    const raw = await json(['skills', 'list', '--repo', 'acme/api', '--json']);
    assert.equal(raw.agents[0].variants[0].id, 'acme/api:skills/deploy/SKILL.md');
    const bad = await cli(['skills', 'list', '--repo', 'nope']);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /HTTP 400.*owner\/repo/);
  });
});
