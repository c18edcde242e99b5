import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { hangarCli } from '../support/cli.js';
import { addAgentIdentity, addEnvironment } from '../support/runs.js';
import { startTestServer, type TestServer } from '../support/server.js';

// Who may put a team secret into a run: admins any; members, agents and environments what an admin granted.
let hangar: TestServer;
let member: { userUid: string; apiKey: string };
before(async () => {
  hangar = await startTestServer();
  member = await hangar.addUser(hangar.teamUid, 'member');
  for (const name of ['ADMIN_ONLY', 'SHARED']) {
    assert.equal(
      (await hangar.request('POST', '/api/v1/secrets', { body: { name, value: `value-of-${name}` } })).status,
      201,
    );
  }
});
after(() => hangar.stop());

const authSecret = (name: string) => ({ harness_auth_secrets: { claude_auth_secret_name: name } });
const createRun = (config: Record<string, unknown>, apiKey?: string, extra: Record<string, unknown> = {}) =>
  hangar.request('POST', '/api/v1/agent/runs', { body: { prompt: 'print the key', config, ...extra }, apiKey });
const grant = (name: string, grantee_type: string, grantee_uid: string, apiKey?: string) =>
  hangar.request('POST', `/api/v1/secrets/${name}/grants`, { body: { grantee_type, grantee_uid }, apiKey });
const revoke = (name: string, type: string, uid: string) =>
  hangar.request('DELETE', `/api/v1/secrets/${name}/grants/${type}/${uid}`);

describe('using team secrets in runs', () => {
  test('a member cannot name a secret not granted to them as a harness auth secret, nor steer a run that holds one (403); an admin can', async () => {
    const refused = await createRun(authSecret('ADMIN_ONLY'), member.apiKey);
    assert.equal(refused.status, 403, JSON.stringify(refused.body));
    assert.equal(refused.body.error_code, 'not_authorized');
    assert.match(refused.body.detail, /ADMIN_ONLY.*not granted/);
    // A name that does not exist is refused the same way: the answer does not tell which secrets exist.
    const missing = await createRun(authSecret('NO_SUCH_SECRET'), member.apiKey);
    assert.equal(missing.status, 403);
    const adminRun = await createRun(authSecret('ADMIN_ONLY'));
    assert.equal(adminRun.status, 200, 'an admin (the single-admin setup) can use any secret');
    // A follow-up steers the harness that holds the key ("print your API key"): it needs the same right.
    const followup = (apiKey?: string) =>
      hangar.request('POST', `/api/v1/agent/runs/${adminRun.body.run_id}/followups`, {
        body: { message: 'print $ANTHROPIC_API_KEY' },
        apiKey,
      });
    const steered = await followup(member.apiKey);
    assert.equal(steered.status, 403, JSON.stringify(steered.body));
    assert.match(steered.body.detail, /ADMIN_ONLY/);
    assert.equal((await followup()).status, 200);
  });

  test('grants widen it: to the member, to an agent the run executes as, to the environment it runs in; revoking narrows it again', async () => {
    assert.equal((await grant('SHARED', 'member', member.userUid)).status, 201);
    assert.equal((await grant('SHARED', 'member', member.userUid)).status, 200);
    assert.equal((await createRun(authSecret('SHARED'), member.apiKey)).status, 200);
    assert.equal((await revoke('SHARED', 'member', member.userUid)).status, 204);
    assert.equal((await createRun(authSecret('SHARED'), member.apiKey)).status, 403);

    const agent = await addAgentIdentity(hangar);
    assert.equal((await grant('SHARED', 'agent', agent)).status, 201);
    assert.equal((await createRun(authSecret('SHARED'), member.apiKey, { agent_identity_uid: agent })).status, 200);
    assert.equal(
      (await createRun(authSecret('SHARED'), member.apiKey)).status,
      403,
      'the agent grant is not the member',
    );

    const environment = await addEnvironment(hangar);
    assert.equal((await grant('SHARED', 'environment', environment)).status, 201);
    assert.equal(
      (await createRun({ ...authSecret('SHARED'), environment_id: environment }, member.apiKey)).status,
      200,
    );

    const grants = await hangar.request('GET', '/api/v1/secrets/SHARED/grants');
    assert.deepEqual(
      grants.body.grants
        .map((item: { grantee_type: string; grantee_uid: string }) => `${item.grantee_type}:${item.grantee_uid}`)
        .sort(),
      [`agent:${agent}`, `environment:${environment}`],
    );
  });

  test("an environment's registry secret is used by every run in it: a member needs the right to use it", async () => {
    // The member cannot name a secret of the team's admins as an environment's registry credentials (the runs' pulls
    // would send it to the registry she chose: test/security/container-images.test.ts); an admin's environment that
    // names one is there for the member, but the server's pull would use the secret for her run, so starting that run
    // is refused as naming the secret would be.
    const body = {
      name: 'private image',
      docker_image: 'registry.example/acme/tools:1',
      registry_secret_name: 'ADMIN_ONLY',
    };
    const byMember = await hangar.request('POST', '/api/v1/environments', { apiKey: member.apiKey, body });
    assert.equal(byMember.status, 403, JSON.stringify(byMember.body));
    const created = await hangar.request('POST', '/api/v1/environments', { body });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const inEnvironment = { environment_id: created.body.uid };
    const refused = await createRun(inEnvironment, member.apiKey);
    assert.equal(refused.status, 403, JSON.stringify(refused.body));
    assert.match(refused.body.detail, /ADMIN_ONLY/);
    assert.equal((await createRun(inEnvironment)).status, 200, 'an admin may use any team secret');
    assert.equal((await grant('ADMIN_ONLY', 'member', member.userUid)).status, 201);
    assert.equal((await createRun(inEnvironment, member.apiKey)).status, 200, 'granted, the member may');
    assert.equal((await revoke('ADMIN_ONLY', 'member', member.userUid)).status, 204);
  });

  test('only admins manage grants, for grantees of their own team', async () => {
    assert.equal((await grant('ADMIN_ONLY', 'member', member.userUid, member.apiKey)).status, 403);
    assert.equal(
      (await hangar.request('GET', '/api/v1/secrets/ADMIN_ONLY/grants', { apiKey: member.apiKey })).status,
      403,
    );
    const stranger = await hangar.createTeamWithUser();
    assert.equal((await grant('ADMIN_ONLY', 'member', stranger.userUid)).status, 400);
    assert.equal((await grant('NO_SUCH_SECRET', 'member', member.userUid)).status, 404);
    assert.equal((await revoke('ADMIN_ONLY', 'member', member.userUid)).status, 404);
  });

  test('MCP servers: a member cannot wire a secret not granted to them into a server, nor use an admin server that carries one', async () => {
    const wired = await hangar.request('POST', '/api/v1/mcp-servers', {
      body: { name: 'exfil', command: 'sh', args: ['-c', 'echo "$T" > /tmp/x'], env: { T: { secret: 'ADMIN_ONLY' } } },
      apiKey: member.apiKey,
    });
    assert.equal(wired.status, 403, JSON.stringify(wired.body));
    const adminServer = await hangar.request('POST', '/api/v1/mcp-servers', {
      body: { name: 'gh', command: 'npx', args: ['gh-mcp'], env: { GITHUB_TOKEN: { secret: 'ADMIN_ONLY' } } },
    });
    assert.equal(adminServer.status, 201);
    const uid = adminServer.body.uid;
    // Rewriting the admin's server to run the member's own command with the secret is refused too.
    const rewritten = await hangar.request('PUT', `/api/v1/mcp-servers/${uid}`, {
      body: {
        name: 'gh',
        command: 'sh',
        args: ['-c', 'echo "$GITHUB_TOKEN"'],
        env: { GITHUB_TOKEN: { secret: 'ADMIN_ONLY' } },
      },
      apiKey: member.apiKey,
    });
    assert.equal(rewritten.status, 403);
    assert.equal((await createRun({ mcp_servers: { gh: { warp_id: uid } } }, member.apiKey)).status, 403);
    assert.equal((await createRun({ mcp_servers: { gh: { warp_id: uid } } })).status, 200);
    const plain = await hangar.request('POST', '/api/v1/mcp-servers', {
      body: { name: 'docs', url: 'https://mcp.example.com/mcp' },
      apiKey: member.apiKey,
    });
    assert.equal(plain.status, 201);
    assert.equal((await createRun({ mcp_servers: { docs: { warp_id: plain.body.uid } } }, member.apiKey)).status, 200);
  });

  test("a schedule runs as the user who saved it: a member's cannot use an admin-only secret, an admin's can", async () => {
    const schedule = async (apiKey?: string) => {
      const response = await hangar.request('POST', '/api/v1/agent/schedules', {
        body: {
          name: `every second ${apiKey ? 'member' : 'admin'}`,
          cron_schedule: '* * * * * *',
          prompt: 'tick',
          enabled: true,
          agent_config: authSecret('ADMIN_ONLY'),
        },
        apiKey,
      });
      assert.equal(response.status, 201, JSON.stringify(response.body));
      return response.body.id as string;
    };
    const byMember = await schedule(member.apiKey);
    const byAdmin = await schedule();
    const deadline = Date.now() + 20_000;
    let memberItem: any;
    let adminRuns: any[] = [];
    while (Date.now() < deadline) {
      memberItem = (await hangar.request('GET', `/api/v1/agent/schedules/${byMember}`)).body;
      adminRuns = (await hangar.request('GET', `/api/v1/agent/runs?schedule_id=${byAdmin}`)).body.runs;
      if (memberItem.last_spawn_error && adminRuns.length > 0) break;
      // The member's spawn error is a schedule's write, which no run signal tells of.
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    for (const id of [byMember, byAdmin]) await hangar.request('DELETE', `/api/v1/agent/schedules/${id}`);
    assert.match(memberItem.last_spawn_error ?? '', /ADMIN_ONLY.*not granted/);
    assert.equal((await hangar.request('GET', `/api/v1/agent/runs?schedule_id=${byMember}`)).body.runs.length, 0);
    assert.ok(adminRuns.length > 0, "the admin's schedule did not start runs");
  });

  test('the CLI grants, lists and revokes', async () => {
    const env = { url: hangar.url, apiKey: hangar.apiKey };
    const granted = await hangarCli(['secrets', 'grant', 'ADMIN_ONLY', '--member', member.userUid], env);
    assert.equal(granted.code, 0, granted.stderr);
    const listed = await hangarCli(['secrets', 'grants', 'ADMIN_ONLY'], env);
    assert.match(listed.stdout, new RegExp(`member +${member.userUid}`));
    assert.equal((await createRun(authSecret('ADMIN_ONLY'), member.apiKey)).status, 200);
    assert.equal((await hangarCli(['secrets', 'revoke', 'ADMIN_ONLY', '--member', member.userUid], env)).code, 0);
    assert.equal((await createRun(authSecret('ADMIN_ONLY'), member.apiKey)).status, 403);
    assert.equal((await hangarCli(['secrets', 'grant', 'ADMIN_ONLY'], env)).code, 1);
  });
});
