import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { newUid } from '../../src/platform/crypto.js';
import { createRun, setRunColumns } from '../support/runs.js';
import { startTestServer, type TestServer } from '../support/server.js';

let hangar: TestServer;
before(async () => (hangar = await startTestServer({}, { role: 'api' })));
after(() => hangar.stop());

const config = {
  name: 'Web app',
  description: 'The storefront',
  docker_image: 'node:20-bookworm',
  github_repos: [{ owner: 'acme', repo: 'web' }],
  setup_commands: ['npm ci', 'npm run build'],
  failure_session_retention_minutes: 15,
};

async function create(body: Record<string, unknown> = config, apiKey?: string) {
  const response = await hangar.request('POST', '/api/v1/environments', { body, apiKey });
  assert.equal(response.status, 201, JSON.stringify(response.body));
  return response.body;
}

async function list(apiKey?: string, sortBy?: string) {
  const response = await hangar.request('GET', `/agent/environments${sortBy ? `?sort_by=${sortBy}` : ''}`, { apiKey });
  assert.equal(response.status, 200, JSON.stringify(response.body));
  return response.body.environments as Array<Record<string, any>>;
}

describe('environments API', () => {
  test('create answers 201 with a 22-character uid, the config, its creator and scope', async () => {
    const before = Date.now();
    const item = await create();
    assert.match(item.uid, /^[A-Za-z0-9]{22}$/);
    assert.deepEqual(item.config, config);
    assert.equal(item.setup_failed, false);
    assert.equal(item.access, 'owner');
    assert.deepEqual(item.scope, { type: 'Team', uid: hangar.teamUid });
    assert.deepEqual(item.creator, { type: 'user', uid: hangar.userUid, display_name: 'Admin' });
    assert.ok(Date.parse(item.last_updated) >= before - 1000);
    assert.deepEqual(item.sharing, { guests: [], link_active: false });
    assert.equal(item.last_task_created, undefined);
    assert.equal(item.last_task_run_timestamp, undefined);
    const fetched = await hangar.request('GET', `/api/v1/environments/${item.uid}`);
    assert.equal(fetched.status, 200);
    assert.deepEqual(fetched.body, item);
  });

  test('optional fields get their defaults', async () => {
    const item = await create({ name: 'Bare' });
    assert.deepEqual(item.config, {
      name: 'Bare',
      description: '',
      github_repos: [],
      setup_commands: [],
      failure_session_retention_minutes: null,
    });
  });

  test('bad configs are 400 invalid_request naming the field', async () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{}, /name/],
      [{ name: '' }, /name/],
      [{ name: 'x'.repeat(201) }, /name/],
      [{ name: '  ' }, /name/],
      [{ name: 'x', github_repos: [{ owner: 'acme' }] }, /repo/],
      [{ name: 'x', github_repos: [{ owner: 'acme corp', repo: 'web' }] }, /github_repos\[0\].*owner/],
      [{ name: 'x', github_repos: [{ owner: 'acme', repo: 'a/b' }] }, /github_repos\[0\].*repository/],
      [
        {
          name: 'x',
          github_repos: [
            { owner: 'acme', repo: 'web' },
            { owner: 'Acme', repo: 'Web' },
          ],
        },
        /twice/,
      ],
      [{ name: 'x', setup_commands: [5] }, /setup_commands/],
      [{ name: 'x', failure_session_retention_minutes: 0 }, /failure_session_retention_minutes/],
      [{ name: 'x', failure_session_retention_minutes: 61 }, /failure_session_retention_minutes/],
      [{ name: 'x', failure_session_retention_minutes: 1.5 }, /failure_session_retention_minutes/],
      [{ name: 'x', docker_image: 'not an image' }, /docker_image/],
      [{ name: 'x', githubRepos: [] }, /githubRepos/],
    ];
    for (const [body, reason] of cases) {
      const response = await hangar.request('POST', '/api/v1/environments', { body });
      assert.equal(response.status, 400, JSON.stringify(body));
      assert.equal(response.body.error_code, 'invalid_request');
      assert.match(response.body.detail, reason, JSON.stringify(body));
    }
    for (const minutes of [1, 60, null]) {
      assert.equal(
        (await create({ name: 'ok', failure_session_retention_minutes: minutes })).config
          .failure_session_retention_minutes,
        minutes,
      );
    }
  });

  test('PUT replaces the whole config, moves last_updated and clears setup_failed', async () => {
    const item = await create();
    await hangar.db.updateTable('environments').set({ setup_failed: true }).where('uid', '=', item.uid).execute();
    assert.equal((await hangar.request('GET', `/api/v1/environments/${item.uid}`)).body.setup_failed, true);
    const replaced = await hangar.request('PUT', `/api/v1/environments/${item.uid}`, { body: { name: 'Renamed' } });
    assert.equal(replaced.status, 200, JSON.stringify(replaced.body));
    assert.deepEqual(replaced.body.config, {
      name: 'Renamed',
      description: '',
      github_repos: [],
      setup_commands: [],
      failure_session_retention_minutes: null,
    });
    assert.equal(replaced.body.setup_failed, false);
    assert.ok(Date.parse(replaced.body.last_updated) > Date.parse(item.last_updated));
    assert.equal(replaced.body.created_at, item.created_at);
    assert.equal((await hangar.request('PUT', `/api/v1/environments/${item.uid}`, { body: { name: '' } })).status, 400);
  });

  test('DELETE answers 204; the environment is gone', async () => {
    const item = await create();
    const deleted = await hangar.request('DELETE', `/api/v1/environments/${item.uid}`);
    assert.equal(deleted.status, 204);
    assert.equal(deleted.body, undefined);
    assert.equal((await hangar.request('GET', `/api/v1/environments/${item.uid}`)).status, 404);
    assert.equal((await hangar.request('DELETE', `/api/v1/environments/${item.uid}`)).status, 404);
    assert.ok(!(await list()).some((environment) => environment.uid === item.uid));
  });

  test('an unknown or malformed uid is 404 on every route', async () => {
    for (const uid of [newUid(), 'short', 'A'.repeat(23), 'AAAAAAAAAAAAAAAAAAAAA-', 'empty-environment']) {
      for (const [method, suffix, body] of [
        ['GET', '', undefined],
        ['PUT', '', { name: 'x' }],
        ['DELETE', '', undefined],
        ['POST', '/guests', { team_uid: hangar.teamUid }],
        ['DELETE', `/guests/${hangar.teamUid}`, undefined],
        ['POST', '/share-link', undefined],
      ] as const) {
        const response = await hangar.request(method, `/api/v1/environments/${encodeURIComponent(uid)}${suffix}`, {
          body,
        });
        assert.equal(response.status, 404, `${method} ${uid}${suffix}`);
        assert.equal(response.body.error_code, 'resource_not_found');
      }
    }
  });

  test("another team sees nothing of a team's environment", async () => {
    const item = await create();
    const other = await hangar.createTeamWithUser();
    assert.ok(!(await list(other.apiKey)).some((environment) => environment.uid === item.uid));
    for (const [method, suffix, body] of [
      ['GET', '', undefined],
      ['PUT', '', { name: 'taken' }],
      ['DELETE', '', undefined],
      ['POST', '/guests', { team_uid: other.teamUid }],
      ['POST', '/share-link', undefined],
    ] as const) {
      const response = await hangar.request(method, `/api/v1/environments/${item.uid}${suffix}`, {
        body,
        apiKey: other.apiKey,
      });
      assert.equal(response.status, 404, `${method} ${suffix}`);
    }
    assert.equal((await hangar.request('GET', `/api/v1/environments/${item.uid}`)).body.config.name, 'Web app');
    const run = await hangar.request('POST', '/agent/runs', {
      body: { prompt: 'x', config: { environment_id: item.uid } },
      apiKey: other.apiKey,
    });
    assert.equal(run.status, 403);
  });

  test('without an API key every route is 401', async () => {
    for (const [method, url] of [
      ['GET', '/api/v1/agent/environments'],
      ['POST', '/api/v1/environments'],
      ['GET', `/api/v1/environments/${newUid()}`],
      ['POST', '/api/v1/environments/join'],
    ] as const) {
      assert.equal((await hangar.request(method, url, { apiKey: null })).status, 401, url);
    }
  });

  test('the list sorts by last update (default, newest first) or by name', async () => {
    const team = await hangar.createTeamWithUser();
    const charlie = await create({ name: 'charlie' }, team.apiKey);
    const alpha = await create({ name: 'Alpha' }, team.apiKey);
    const bravo = await create({ name: 'bravo' }, team.apiKey);
    assert.deepEqual(
      (await list(team.apiKey)).map((environment) => environment.uid),
      [bravo.uid, alpha.uid, charlie.uid],
    );
    await hangar.request('PUT', `/api/v1/environments/${charlie.uid}`, {
      body: { name: 'charlie' },
      apiKey: team.apiKey,
    });
    assert.deepEqual(
      (await list(team.apiKey, 'last_updated')).map((environment) => environment.uid),
      [charlie.uid, bravo.uid, alpha.uid],
    );
    assert.deepEqual(
      (await list(team.apiKey, 'name')).map((environment) => environment.config.name),
      ['Alpha', 'bravo', 'charlie'],
    );
    const bad = await hangar.request('GET', '/agent/environments?sort_by=created', { apiKey: team.apiKey });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error_code, 'invalid_request');
    // Only the owning team sees who an environment is shared with; the list never carries it.
    assert.ok((await list(team.apiKey)).every((environment) => environment.sharing === undefined));
  });

  test('last_task_created and last_task_run_timestamp follow the runs that used the environment', async () => {
    const team = await hangar.createTeamWithUser();
    const used = await create({ name: 'used' }, team.apiKey);
    const unused = await create({ name: 'unused' }, team.apiKey);
    const first = await createRun(hangar, { config: { environment_id: used.uid } }, team.apiKey);
    const second = await createRun(hangar, { config: { environment_id: used.uid } }, team.apiKey);
    await setRunColumns(hangar, first, { started_at: '2030-01-01T00:00:00.000Z' });
    const runs = await hangar.db
      .selectFrom('runs')
      .select(['id', 'created_at'])
      .where('id', 'in', [first, second])
      .execute();
    const latestCreated = new Date(Math.max(...runs.map((run) => new Date(run.created_at).getTime()))).toISOString();

    const byUid = new Map((await list(team.apiKey)).map((environment) => [environment.uid, environment]));
    assert.equal(byUid.get(used.uid)!.last_task_created, latestCreated);
    assert.equal(byUid.get(used.uid)!.last_task_run_timestamp, '2030-01-01T00:00:00.000Z');
    assert.equal(byUid.get(unused.uid)!.last_task_created, undefined);
    assert.equal(byUid.get(unused.uid)!.last_task_run_timestamp, undefined);
    const single = await hangar.request('GET', `/api/v1/environments/${used.uid}`, { apiKey: team.apiKey });
    assert.equal(single.body.last_task_created, latestCreated);
  });

  test('environments appear in the OpenAPI document', async () => {
    const document = (await hangar.request('GET', '/api/v1/openapi.json')).body;
    for (const path of [
      '/agent/environments',
      '/environments',
      '/environments/{uid}',
      '/environments/{uid}/guests',
      '/environments/{uid}/guests/{team_uid}',
      '/environments/{uid}/share-link',
      '/environments/join',
      '/agent',
    ]) {
      assert.ok(document.paths[path], path);
    }
  });
});
