import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { hangarCli } from '../support/cli.js';
import { startTestServer, type TestServer } from '../support/server.js';

let hangar: TestServer;
before(async () => (hangar = await startTestServer({}, { role: 'api' })));
after(() => hangar.stop());

describe('admin API', () => {
  test('teams, users and memberships are managed by an administrator', async () => {
    const team = await hangar.request('POST', '/api/v1/admin/teams', { body: { name: 'platform' } });
    assert.equal(team.status, 201);
    assert.equal(team.body.name, 'platform');
    assert.match(team.body.uid, /^[A-Za-z0-9]{22}$/);
    assert.equal((await hangar.request('POST', '/api/v1/admin/teams', { body: { name: 'platform' } })).status, 409);
    const teams = await hangar.request('GET', '/api/v1/admin/teams');
    assert.ok(teams.body.teams.some((t: { uid: string }) => t.uid === team.body.uid));

    const user = await hangar.request('POST', '/api/v1/admin/users', {
      body: { display_name: 'Ada', email: 'ada@example.com' },
    });
    assert.equal(user.status, 201);
    assert.equal(user.body.is_admin, false);
    assert.equal(
      (await hangar.request('POST', '/api/v1/admin/users', { body: { display_name: 'Dup', email: 'ada@example.com' } }))
        .status,
      409,
    );
    assert.equal(
      (await hangar.request('POST', '/api/v1/admin/users', { body: { display_name: 'Bad', email: 'not-an-email' } }))
        .status,
      400,
    );
    assert.ok(
      (await hangar.request('GET', '/api/v1/admin/users')).body.users.some(
        (u: { uid: string }) => u.uid === user.body.uid,
      ),
    );

    const member = await hangar.request('PUT', `/api/v1/admin/teams/${team.body.uid}/members/${user.body.uid}`, {
      body: { role: 'member' },
    });
    assert.equal(member.status, 200);
    assert.equal(member.body.role, 'member');
    const promoted = await hangar.request('PUT', `/api/v1/admin/teams/${team.body.uid}/members/${user.body.uid}`, {
      body: { role: 'admin' },
    });
    assert.equal(promoted.body.role, 'admin');
    const members = await hangar.request('GET', `/api/v1/admin/teams/${team.body.uid}/members`);
    assert.deepEqual(
      members.body.members.map((m: { user_uid: string; role: string }) => [m.user_uid, m.role]),
      [[user.body.uid, 'admin']],
    );
    assert.equal(
      (
        await hangar.request('PUT', `/api/v1/admin/teams/${team.body.uid}/members/${user.body.uid}`, {
          body: { role: 'owner' },
        })
      ).status,
      400,
    );
    assert.equal(
      (await hangar.request('PUT', `/api/v1/admin/teams/nope/members/${user.body.uid}`, { body: { role: 'member' } }))
        .status,
      404,
    );
    assert.equal(
      (await hangar.request('DELETE', `/api/v1/admin/teams/${team.body.uid}/members/${user.body.uid}`)).status,
      204,
    );
    assert.equal(
      (await hangar.request('DELETE', `/api/v1/admin/teams/${team.body.uid}/members/${user.body.uid}`)).status,
      404,
    );
  });

  test('a key is shown once, listed without its secret, and revocation holds on the next request', async () => {
    const user = (await hangar.request('POST', '/api/v1/admin/users', { body: { display_name: 'Key holder' } })).body;
    await hangar.request('PUT', `/api/v1/admin/teams/${hangar.teamUid}/members/${user.uid}`, {
      body: { role: 'member' },
    });
    const created = await hangar.request('POST', '/api/v1/admin/api-keys', {
      body: { name: 'laptop', user_uid: user.uid },
    });
    assert.equal(created.status, 201);
    assert.match(created.body.key, /^hgr_[A-Za-z0-9]{40}$/);
    assert.equal(created.body.display_prefix, created.body.key.slice(0, 10));
    const key = created.body.key as string;
    assert.equal((await hangar.request('GET', '/agent/runs', { apiKey: key })).status, 200);

    const listed = await hangar.request('GET', `/api/v1/admin/api-keys?user_uid=${user.uid}`);
    assert.equal(listed.body.api_keys.length, 1);
    assert.equal(listed.body.api_keys[0].uid, created.body.uid);
    assert.equal(JSON.stringify(listed.body).includes(key), false, 'the key is never shown again');
    const stored = await hangar.db
      .selectFrom('api_keys')
      .selectAll()
      .where('uid', '=', created.body.uid)
      .executeTakeFirstOrThrow();
    assert.equal(JSON.stringify(stored).includes(key), false, 'only a hash is stored');

    assert.equal((await hangar.request('DELETE', `/api/v1/admin/api-keys/${created.body.uid}`)).status, 204);
    const after = await hangar.request('GET', '/agent/runs', { apiKey: key });
    assert.equal(after.status, 401);
    assert.equal(after.body.error_code, 'authentication_required');
    assert.ok((await hangar.request('GET', `/api/v1/admin/api-keys?user_uid=${user.uid}`)).body.api_keys[0].revoked_at);
    assert.equal((await hangar.request('DELETE', '/api/v1/admin/api-keys/nope')).status, 404);
    assert.equal((await hangar.request('POST', '/api/v1/admin/api-keys', { body: { name: 'x' } })).status, 400);
    assert.equal(
      (await hangar.request('POST', '/api/v1/admin/api-keys', { body: { name: 'x', user_uid: 'nobody' } })).status,
      404,
    );
  });

  test('only instance administrators reach the admin API', async () => {
    const teamAdmin = await hangar.addUser(hangar.teamUid, 'admin');
    for (const [method, path] of [
      ['GET', '/api/v1/admin/teams'],
      ['POST', '/api/v1/admin/users'],
      ['GET', '/api/v1/admin/api-keys'],
    ] as const) {
      const response = await hangar.request(method, path, {
        apiKey: teamAdmin.apiKey,
        body: method === 'POST' ? { display_name: 'x' } : undefined,
      });
      assert.equal(response.status, 403, path);
      assert.equal(response.body.error_code, 'not_authorized');
    }
    assert.equal((await hangar.request('GET', '/api/v1/admin/teams', { apiKey: null })).status, 401);
  });

  test('an administrator in several teams needs no team header for the admin API', async () => {
    const other = (await hangar.request('POST', '/api/v1/admin/teams', { body: { name: 'second' } })).body;
    await hangar.request('PUT', `/api/v1/admin/teams/${other.uid}/members/${hangar.userUid}`, {
      body: { role: 'admin' },
    });
    assert.equal((await hangar.request('GET', '/api/v1/admin/teams')).status, 200);
    assert.equal((await hangar.request('GET', '/agent/runs')).status, 400, 'team routes need the header now');
    assert.equal((await hangar.request('GET', '/agent/runs', { headers: { 'x-team-uid': other.uid } })).status, 200);
    await hangar.request('DELETE', `/api/v1/admin/teams/${other.uid}/members/${hangar.userUid}`);
  });

  test('the admin CLI verbs', async () => {
    const env = { url: hangar.url, apiKey: hangar.apiKey };
    const team = await hangarCli(['admin', 'teams', 'create', 'cli-team', '--json'], env);
    assert.equal(team.code, 0, team.stderr);
    const teamUid = JSON.parse(team.stdout).uid;
    const user = await hangarCli(
      ['admin', 'users', 'create', '--name', 'Cli User', '--email', 'cli@example.com', '--json'],
      env,
    );
    const userUid = JSON.parse(user.stdout).uid;
    assert.equal((await hangarCli(['admin', 'members', 'set', teamUid, userUid, '--role', 'admin'], env)).code, 0);
    assert.match((await hangarCli(['admin', 'members', 'list', teamUid], env)).stdout, /Cli User/);
    const key = JSON.parse(
      (await hangarCli(['admin', 'keys', 'create', '--name', 'ci', '--user', userUid, '--json'], env)).stdout,
    );
    assert.match(key.key, /^hgr_/);
    assert.equal((await hangarCli(['runs', 'list'], { url: hangar.url, apiKey: key.key })).code, 0);
    const list = await hangarCli(['admin', 'keys', 'list', '--user', userUid], env);
    assert.ok(!list.stdout.includes(key.key));
    assert.equal((await hangarCli(['admin', 'keys', 'revoke', key.uid], env)).code, 0);
    const refused = await hangarCli(['runs', 'list'], { url: hangar.url, apiKey: key.key });
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /401/);
    assert.match((await hangarCli(['admin', 'teams', 'list'], env)).stdout, /cli-team/);
    assert.match((await hangarCli(['admin', 'users', 'list'], env)).stdout, /Cli User/);
    assert.equal((await hangarCli(['admin', 'members', 'remove', teamUid, userUid], env)).code, 0);
  });
});
