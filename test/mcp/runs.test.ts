import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Caller } from '../../src/identities/caller.js';
import { ApiError } from '../../src/platform/http/errors.js';
import { startTestServer, type TestServer } from '../support/server.js';

let hangar: TestServer;
let other: { teamUid: string; apiKey: string; userUid: string };
let owned: string;
let sharedWithUs: string;
let foreign: string;

const api = (method: string, path: string, options: { body?: unknown; apiKey?: string } = {}) =>
  hangar.request(method, `/api/v1${path}`, options);

async function createServer(body: Record<string, unknown>, apiKey?: string): Promise<string> {
  const response = await api('POST', '/mcp-servers', { body, apiKey });
  assert.equal(response.status, 201, JSON.stringify(response.body));
  return response.body.uid;
}

async function createSecret(name: string, value: string, apiKey?: string): Promise<void> {
  const response = await api('POST', '/secrets', { body: { name, value }, apiKey });
  assert.equal(response.status, 201, JSON.stringify(response.body));
}

before(async () => {
  hangar = await startTestServer({}, { role: 'api' });
  other = await hangar.createTeamWithUser();
  await createSecret('GH_TOKEN', 'ghp_owner-value');
  await createSecret('OTHER_TOKEN', 'other-team-value', other.apiKey);
  owned = await createServer({
    name: 'github',
    command: 'npx',
    args: ['server-github'],
    env: { GITHUB_TOKEN: { secret: 'GH_TOKEN' }, MODE: 'read-only' },
  });
  sharedWithUs = await createServer(
    { name: 'linear', url: 'https://mcp.example.com/mcp', headers: { Authorization: { secret: 'OTHER_TOKEN' } } },
    other.apiKey,
  );
  assert.equal(
    (
      await api('POST', `/mcp-servers/${sharedWithUs}/shares`, {
        body: { team_uid: hangar.teamUid },
        apiKey: other.apiKey,
      })
    ).status,
    200,
  );
  foreign = await createServer({ name: 'private', command: 'secret-tool' }, other.apiKey);
});
after(() => hangar.stop());

const createRun = (mcp_servers: Record<string, unknown>, apiKey?: string) =>
  api('POST', '/agent/runs', { body: { prompt: 'use the tools', config: { mcp_servers } }, apiKey });

describe('runs referencing MCP servers by warp_id', () => {
  test('an owned server and one shared with the team are accepted; the config keeps the reference', async () => {
    const response = await createRun({
      gh: { warp_id: owned },
      tracker: { warp_id: sharedWithUs },
      inline: { command: 'echo' },
    });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    const run = (await api('GET', `/agent/runs/${response.body.run_id}`)).body;
    assert.deepEqual(run.agent_config.mcp_servers, {
      gh: { warp_id: owned },
      tracker: { warp_id: sharedWithUs },
      inline: { command: 'echo' },
    });
    assert.equal(JSON.stringify(run).includes('ghp_owner-value'), false);
  });

  test("another team's unshared server, or an unknown uid, is 403 not_authorized", async () => {
    for (const uid of [foreign, 'AAAAAAAAAAAAAAAAAAAAAA', 'not-even-a-uid']) {
      const response = await createRun({ x: { warp_id: uid } });
      assert.equal(response.status, 403, uid);
      assert.equal(response.body.error_code, 'not_authorized');
      assert.match(response.body.detail, /mcp_servers\.x/);
    }
  });

  test('a shared server stops being usable once unshared', async () => {
    const temporary = await createServer({ name: 'temporary', command: 'x' }, other.apiKey);
    await api('POST', `/mcp-servers/${temporary}/shares`, { body: { team_uid: hangar.teamUid }, apiKey: other.apiKey });
    assert.equal((await createRun({ t: { warp_id: temporary } })).status, 200);
    await api('DELETE', `/mcp-servers/${temporary}/shares/${hangar.teamUid}`, { apiKey: other.apiKey });
    assert.equal((await createRun({ t: { warp_id: temporary } })).status, 403);
  });

  test('the owning team of a shared server keeps using it; the exactly-one rule still gives 400 first', async () => {
    assert.equal((await createRun({ tracker: { warp_id: sharedWithUs } }, other.apiKey)).status, 200);
    assert.equal((await createRun({ gh: { warp_id: owned } }, other.apiKey)).status, 403, 'not shared the other way');
    for (const entry of [
      { warp_id: owned, command: 'x' },
      { warp_id: owned, url: 'https://x' },
      { warp_id: '' },
      { warp_id: 5 },
      {},
    ]) {
      assert.equal((await createRun({ bad: entry })).status, 400, JSON.stringify(entry));
    }
    // Shape problems are reported before access problems, whatever the order of the entries.
    assert.equal(
      (await createRun({ first: { warp_id: foreign }, second: { command: 'x', url: 'https://y' } })).status,
      400,
    );
  });

  test('scheduled runs check the reference inside the scheduler transaction', async () => {
    const principal = {
      type: 'user' as const,
      uid: hangar.userUid,
      displayName: 'Admin',
      email: null,
      isAdmin: true,
      memberships: [{ team_uid: hangar.teamUid, role: 'admin' as const }],
    };
    const owner: Caller = { principal, teamUid: hangar.teamUid, role: 'admin' };
    const request = (uid: string, tick: Date) => ({
      owner,
      body: { prompt: 'scheduled', config: { mcp_servers: { m: { warp_id: uid } } } },
      origin: {
        source: 'SCHEDULED_AGENT' as const,
        schedule: { schedule_id: 'schedule-for-mcp-test', schedule_name: 'mcp', cron_schedule: '@daily' },
        scheduleTick: tick,
      },
    });
    const outcomes = await hangar.db
      .transaction()
      .execute((trx) =>
        hangar.server.services.runs.createWithin(trx, [
          request(owned, new Date(1_000)),
          request(foreign, new Date(2_000)),
        ]),
      );
    assert.ok(!(outcomes[0] instanceof ApiError));
    assert.ok(outcomes[1] instanceof ApiError && outcomes[1].status === 403);
  });
});

describe('resolveForRun', () => {
  const resolve = (teamUid: string, uid: string) => hangar.server.services.mcpServers.resolveForRun(teamUid, uid);

  test("fills in the owning team's secret values for the owner and for teams it is shared with", async () => {
    assert.deepEqual(await resolve(hangar.teamUid, owned), {
      uid: owned,
      name: 'github',
      command: 'npx',
      args: ['server-github'],
      env: { GITHUB_TOKEN: 'ghp_owner-value', MODE: 'read-only' },
      secret_names: { GITHUB_TOKEN: 'GH_TOKEN' },
    });
    const expected = {
      uid: sharedWithUs,
      name: 'linear',
      url: 'https://mcp.example.com/mcp',
      headers: { Authorization: 'other-team-value' },
      secret_names: { Authorization: 'OTHER_TOKEN' },
    };
    assert.deepEqual(
      await resolve(hangar.teamUid, sharedWithUs),
      expected,
      'a shared server uses its owner team secrets',
    );
    assert.deepEqual(await resolve(other.teamUid, sharedWithUs), expected);
  });

  test('refuses a server the team cannot use (403) and reports a secret that is gone (400)', async () => {
    await assert.rejects(
      resolve(hangar.teamUid, foreign),
      (error: unknown) => error instanceof ApiError && error.status === 403,
    );
    await assert.rejects(
      resolve(other.teamUid, owned),
      (error: unknown) => error instanceof ApiError && error.status === 403,
    );

    await createSecret('ROTATING', 'first');
    const uid = await createServer({ name: 'rotating', command: 'x', env: { KEY: { secret: 'ROTATING' } } });
    assert.equal(((await resolve(hangar.teamUid, uid)) as { env: Record<string, string> }).env.KEY, 'first');
    assert.equal((await api('PUT', '/secrets/ROTATING', { body: { value: 'second' } })).status, 200);
    assert.equal(
      ((await resolve(hangar.teamUid, uid)) as { env: Record<string, string> }).env.KEY,
      'second',
      'a new value is used at once',
    );
    assert.equal((await api('DELETE', '/secrets/ROTATING')).status, 204);
    await assert.rejects(
      resolve(hangar.teamUid, uid),
      (error: unknown) =>
        error instanceof ApiError &&
        error.status === 400 &&
        /ROTATING/.test(error.detail) &&
        !/second/.test(error.detail),
    );
  });

  test('no HTTP response of an MCP server carries a secret value', async () => {
    const bodies = [
      (await api('GET', '/mcp-servers')).body,
      (await api('GET', `/mcp-servers/${owned}`)).body,
      (await api('GET', `/mcp-servers/${sharedWithUs}`)).body,
      (await api('GET', '/mcp-servers', { apiKey: other.apiKey })).body,
    ];
    const text = JSON.stringify(bodies);
    for (const value of ['ghp_owner-value', 'other-team-value']) assert.equal(text.includes(value), false, value);
  });
});
