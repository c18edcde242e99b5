import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestServer, type TestServer } from '../support/server.js';

let hangar: TestServer;
/** A second team, and an admin and a member of it. */
let other: { teamUid: string; apiKey: string };
let otherMember: { apiKey: string };
/** A team that is never shared anything. */
let stranger: { teamUid: string; apiKey: string };

before(async () => {
  hangar = await startTestServer({}, { role: 'api' });
  other = await hangar.createTeamWithUser();
  otherMember = await hangar.addUser(other.teamUid, 'member');
  stranger = await hangar.createTeamWithUser();
  const secret = await hangar.request('POST', '/api/v1/secrets', { body: { name: 'GH_TOKEN', value: 'ghp_value' } });
  assert.equal(secret.status, 201);
});
after(() => hangar.stop());

const api = (method: string, path: string, options: { body?: unknown; apiKey?: string } = {}) =>
  hangar.request(method, `/api/v1${path}`, options);

let counter = 0;
const uniqueName = (prefix: string) => `${prefix}-${++counter}`;

async function create(body: Record<string, unknown>, apiKey?: string) {
  const response = await api('POST', '/mcp-servers', {
    body: { name: uniqueName('server'), command: 'npx', ...body },
    apiKey,
  });
  assert.equal(response.status, 201, JSON.stringify(response.body));
  return response.body;
}

describe('MCP servers API', () => {
  test('create a stdio server: 201 with uid, definition, owner, shares and timestamps; secrets by name only', async () => {
    const item = await create({
      name: 'github',
      command: 'npx',
      args: ['-y', '@modelcontextprotocol/server-github'],
      env: { GITHUB_TOKEN: { secret: 'GH_TOKEN' }, LOG: 'debug' },
    });
    assert.match(item.uid, /^[A-Za-z0-9]{22}$/);
    assert.deepEqual(
      { ...item, created_at: undefined, updated_at: undefined },
      {
        uid: item.uid,
        name: 'github',
        command: 'npx',
        args: ['-y', '@modelcontextprotocol/server-github'],
        env: { GITHUB_TOKEN: { secret: 'GH_TOKEN' }, LOG: 'debug' },
        owner_team_uid: hangar.teamUid,
        shared_with: [],
        created_at: undefined,
        updated_at: undefined,
      },
    );
    assert.match(item.created_at, /Z$/);
    assert.equal(JSON.stringify(item).includes('ghp_value'), false);
    const fetched = await api('GET', `/mcp-servers/${item.uid}`);
    assert.equal(fetched.status, 200);
    assert.deepEqual(fetched.body, item);
  });

  test('create an HTTP server whose headers use a secret', async () => {
    const item = await create({
      command: undefined,
      url: 'https://mcp.example.com/mcp',
      headers: { Authorization: { secret: 'GH_TOKEN' }, 'X-Plain': 'yes' },
    });
    assert.equal(item.url, 'https://mcp.example.com/mcp');
    assert.deepEqual(item.headers, { Authorization: { secret: 'GH_TOKEN' }, 'X-Plain': 'yes' });
    assert.equal(item.command, undefined);
    assert.equal(item.args, undefined);
  });

  test('bad definitions give 400 with the reason', async () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ name: 'x' }, /exactly one of command/],
      [{ name: 'x', command: 'a', url: 'https://b' }, /exactly one of command/],
      [{ name: 'x', command: 'a', headers: { A: 'b' } }, /headers go with url/],
      [{ name: 'x', url: 'https://b', env: { A: 'b' } }, /args and env go with command/],
      [{ name: 'x', url: 'ftp://b' }, /http or https/],
      [{ name: 'x', url: 'nope' }, /valid URL/],
      [{ name: 'x', command: 'a', env: { 'BAD NAME': 'v' } }, /environment variable name/],
      [{ name: 'x', url: 'https://b', headers: { 'X-A': 'a\nb' } }, /headers\.X-A/],
      [{ name: 'x', command: 'a', env: { A: { secret: 'MISSING_ONE' } } }, /MISSING_ONE/],
      [{ name: 'x', command: 'a', env: { A: { secret: 'GH_TOKEN', value: 'x' } } }, /env/],
      [{ name: 'x', command: 'a', env: { A: 5 } }, /env/],
      [{ name: 'bad name', command: 'a' }, /name/],
      [{ command: 'a' }, /name/],
      [{ name: 'x', command: 'a', extra: 1 }, /extra/],
    ];
    for (const [body, reason] of cases) {
      const response = await api('POST', '/mcp-servers', { body });
      assert.equal(response.status, 400, JSON.stringify(body));
      assert.equal(response.body.error_code, 'invalid_request');
      assert.match(response.body.detail, reason, JSON.stringify(body));
    }
  });

  test('a secret of another team does not count as existing', async () => {
    const response = await api('POST', '/mcp-servers', {
      body: { name: 'x', command: 'a', env: { A: { secret: 'GH_TOKEN' } } },
      apiKey: other.apiKey,
    });
    assert.equal(response.status, 400);
    assert.match(response.body.detail, /GH_TOKEN/);
  });

  test('a name is unique in its team (409), but not across teams', async () => {
    const first = await create({ name: 'dup' });
    const again = await api('POST', '/mcp-servers', { body: { name: 'dup', command: 'other' } });
    assert.equal(again.status, 409);
    assert.equal(again.body.error_code, 'conflict');
    const elsewhere = await api('POST', '/mcp-servers', {
      body: { name: 'dup', command: 'other' },
      apiKey: other.apiKey,
    });
    assert.equal(elsewhere.status, 201);
    const second = await create({ name: 'dup-2' });
    const rename = await api('PUT', `/mcp-servers/${second.uid}`, { body: { name: 'dup', command: 'x' } });
    assert.equal(rename.status, 409);
    assert.equal((await api('GET', `/mcp-servers/${first.uid}`)).body.command, 'npx');
  });

  test('PUT replaces the whole definition (stdio to HTTP) and moves updated_at', async () => {
    const item = await create({ args: ['a'], env: { A: 'b' } });
    // Not a wait for an event: the clock must move for updated_at to.
    await new Promise((resolve) => setTimeout(resolve, 5));
    const response = await api('PUT', `/mcp-servers/${item.uid}`, {
      body: { name: 'renamed-to-http', url: 'https://mcp.example.com/other' },
    });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    assert.equal(response.body.name, 'renamed-to-http');
    assert.equal(response.body.url, 'https://mcp.example.com/other');
    assert.deepEqual(response.body.headers, {});
    assert.equal(response.body.command, undefined);
    assert.equal(response.body.env, undefined);
    assert.equal(response.body.created_at, item.created_at);
    assert.ok(response.body.updated_at > item.updated_at);
    assert.equal(
      (await api('PUT', '/mcp-servers/AAAAAAAAAAAAAAAAAAAAAA', { body: { name: 'n', command: 'c' } })).status,
      404,
    );
    assert.equal(
      (await api('PUT', `/mcp-servers/${item.uid}`, { body: { name: 'n', command: 'c', url: 'https://x' } })).status,
      400,
    );
  });

  test('sharing: the other team sees and may use it but not change it; a third team sees nothing', async () => {
    const item = await create({ name: 'shared-one', env: { TOKEN: { secret: 'GH_TOKEN' } } });
    assert.equal(
      (await api('GET', `/mcp-servers/${item.uid}`, { apiKey: other.apiKey })).status,
      404,
      'not shared yet',
    );

    const shared = await api('POST', `/mcp-servers/${item.uid}/shares`, { body: { team_uid: other.teamUid } });
    assert.equal(shared.status, 200, JSON.stringify(shared.body));
    assert.deepEqual(shared.body.shared_with, [other.teamUid]);
    const twice = await api('POST', `/mcp-servers/${item.uid}/shares`, { body: { team_uid: other.teamUid } });
    assert.deepEqual(twice.body.shared_with, [other.teamUid], 'sharing twice changes nothing');

    for (const apiKey of [other.apiKey, otherMember.apiKey]) {
      const seen = await api('GET', `/mcp-servers/${item.uid}`, { apiKey });
      assert.equal(seen.status, 200);
      assert.equal(seen.body.owner_team_uid, hangar.teamUid);
      assert.equal(seen.body.shared_with, undefined, 'only the owning team sees whom it is shared with');
      assert.deepEqual(seen.body.env, { TOKEN: { secret: 'GH_TOKEN' } });
      const listed = (await api('GET', '/mcp-servers', { apiKey })).body.mcp_servers;
      assert.ok(listed.some((entry: { uid: string }) => entry.uid === item.uid));
    }
    for (const [method, path, body] of [
      ['PUT', `/mcp-servers/${item.uid}`, { name: 'hijack', command: 'evil' }],
      ['DELETE', `/mcp-servers/${item.uid}`, undefined],
      ['POST', `/mcp-servers/${item.uid}/shares`, { team_uid: stranger.teamUid }],
      ['DELETE', `/mcp-servers/${item.uid}/shares/${other.teamUid}`, undefined],
    ] as const) {
      const response = await api(method, path, { body, apiKey: other.apiKey });
      assert.equal(response.status, 403, `${method} ${path}`);
      assert.equal(response.body.error_code, 'not_authorized');
    }
    for (const [method, path, body] of [
      ['GET', `/mcp-servers/${item.uid}`, undefined],
      ['PUT', `/mcp-servers/${item.uid}`, { name: 'hijack', command: 'evil' }],
      ['DELETE', `/mcp-servers/${item.uid}`, undefined],
      ['POST', `/mcp-servers/${item.uid}/shares`, { team_uid: stranger.teamUid }],
      ['DELETE', `/mcp-servers/${item.uid}/shares/${other.teamUid}`, undefined],
    ] as const) {
      const response = await api(method, path, { body, apiKey: stranger.apiKey });
      assert.equal(response.status, 404, `${method} ${path}`);
    }
    const strangerList = (await api('GET', '/mcp-servers', { apiKey: stranger.apiKey })).body.mcp_servers;
    assert.ok(!strangerList.some((entry: { uid: string }) => entry.uid === item.uid));
    const unchanged = await api('GET', `/mcp-servers/${item.uid}`);
    assert.equal(unchanged.body.name, 'shared-one');
    assert.deepEqual(unchanged.body.shared_with, [other.teamUid]);

    const unshared = await api('DELETE', `/mcp-servers/${item.uid}/shares/${other.teamUid}`);
    assert.equal(unshared.status, 204);
    assert.equal((await api('GET', `/mcp-servers/${item.uid}`, { apiKey: other.apiKey })).status, 404);
    assert.equal(
      (await api('DELETE', `/mcp-servers/${item.uid}/shares/${other.teamUid}`)).status,
      404,
      'not shared any more',
    );
    assert.deepEqual((await api('GET', `/mcp-servers/${item.uid}`)).body.shared_with, []);
  });

  test('sharing needs an existing other team and the admin role of the owning team', async () => {
    const item = await create({});
    const unknown = await api('POST', `/mcp-servers/${item.uid}/shares`, {
      body: { team_uid: 'NoSuchTeamNoSuchTeam00' },
    });
    assert.equal(unknown.status, 400);
    assert.match(unknown.body.detail, /does not exist/);
    assert.equal(
      (await api('POST', `/mcp-servers/${item.uid}/shares`, { body: { team_uid: hangar.teamUid } })).status,
      400,
    );
    assert.equal((await api('POST', `/mcp-servers/${item.uid}/shares`, { body: {} })).status, 400);

    const member = await hangar.addUser(hangar.teamUid, 'member');
    const byMember = await api('POST', `/mcp-servers/${item.uid}/shares`, {
      body: { team_uid: other.teamUid },
      apiKey: member.apiKey,
    });
    assert.equal(byMember.status, 403);
    assert.match(byMember.body.detail, /admin/);
    await api('POST', `/mcp-servers/${item.uid}/shares`, { body: { team_uid: other.teamUid } });
    assert.equal(
      (await api('DELETE', `/mcp-servers/${item.uid}/shares/${other.teamUid}`, { apiKey: member.apiKey })).status,
      403,
    );
    // Members of the owning team may still define, change and delete servers.
    const own = await create({}, member.apiKey);
    assert.equal(
      (
        await api('PUT', `/mcp-servers/${own.uid}`, {
          body: { name: own.name, command: 'changed' },
          apiKey: member.apiKey,
        })
      ).status,
      200,
    );
    assert.equal((await api('DELETE', `/mcp-servers/${own.uid}`, { apiKey: member.apiKey })).status, 204);
  });

  test('the list holds owned and shared servers, by name; DELETE removes a server and its shares', async () => {
    const fresh = await hangar.createTeamWithUser();
    const mine = await create({ name: 'b-mine' }, fresh.apiKey);
    const theirs = await create({ name: 'a-theirs' });
    await api('POST', `/mcp-servers/${theirs.uid}/shares`, { body: { team_uid: fresh.teamUid } });
    const list = await api('GET', '/mcp-servers', { apiKey: fresh.apiKey });
    assert.equal(list.status, 200);
    assert.deepEqual(
      list.body.mcp_servers.map((entry: { name: string; owner_team_uid: string; shared_with?: string[] }) => [
        entry.name,
        entry.owner_team_uid,
        entry.shared_with,
      ]),
      [
        ['a-theirs', hangar.teamUid, undefined],
        ['b-mine', fresh.teamUid, []],
      ],
    );

    assert.equal((await api('DELETE', `/mcp-servers/${theirs.uid}`)).status, 204);
    assert.equal((await api('GET', `/mcp-servers/${theirs.uid}`)).status, 404);
    assert.equal((await api('DELETE', `/mcp-servers/${theirs.uid}`)).status, 404);
    assert.deepEqual(
      (await api('GET', '/mcp-servers', { apiKey: fresh.apiKey })).body.mcp_servers.map(
        (entry: { uid: string }) => entry.uid,
      ),
      [mine.uid],
    );
    const shares = await hangar.db
      .selectFrom('mcp_server_shares')
      .select('team_uid')
      .where('server_uid', '=', theirs.uid)
      .execute();
    assert.deepEqual(shares, []);
  });

  test('the routes are in the OpenAPI document', async () => {
    const document = (await hangar.request('GET', '/api/v1/openapi.json', { apiKey: null })).body;
    assert.ok(document.paths['/mcp-servers'].post && document.paths['/mcp-servers'].get);
    const one = document.paths['/mcp-servers/{uid}'];
    assert.ok(one.get && one.put && one.delete);
    assert.ok(document.paths['/mcp-servers/{uid}/shares'].post);
    assert.ok(document.paths['/mcp-servers/{uid}/shares/{team_uid}'].delete);
  });
});
