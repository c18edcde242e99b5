import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestServer, type TestServer } from '../support/server.js';

// API keys are looked up, and creates written, together with those of the requests arriving alongside
// (src/identities/authenticate.ts, src/runs/inserts.ts). These tests send bursts that land in shared batches and
// check that every request is still answered for its own key, team and capacity.

let hangar: TestServer;
before(async () => {
  // API only, so runs stay QUEUED; one executing run per team reaches that team's limit. The bursts' unknown and
  // revoked keys all come from this one client: the failed-authentication throttle must not be what answers them.
  hangar = await startTestServer(
    {
      HANGAR_MAX_CONCURRENT_RUNS: '100',
      HANGAR_MAX_CONCURRENT_RUNS_PER_TEAM: '1',
      HANGAR_AUTH_FAILURES_PER_MINUTE: '1000000',
    },
    { role: 'api' },
  );
});
after(() => hangar.stop());

const burst = <T>(count: number, request: (index: number) => Promise<T>) =>
  Promise.all(Array.from({ length: count }, (_, i) => request(i)));

describe('requests arriving together', () => {
  test('each is authenticated with its own key: teams, unknown and revoked keys are never mixed up', async () => {
    const red = await hangar.createTeamWithUser({ teamName: 'red' });
    const blue = await hangar.createTeamWithUser({ teamName: 'blue' });
    const doomed = await hangar.addUser(red.teamUid);
    const revoked = await hangar.db
      .selectFrom('api_keys')
      .select('uid')
      .where('user_uid', '=', doomed.userUid)
      .executeTakeFirstOrThrow();
    assert.equal((await hangar.request('DELETE', `/api/v1/admin/api-keys/${revoked.uid}`)).status, 204);

    const keys = [red.apiKey, blue.apiKey, doomed.apiKey, 'hgr_unknown_key'];
    const created = await burst(80, (i) =>
      hangar.request('POST', '/agent/runs', {
        apiKey: keys[i % 4],
        body: { prompt: `burst ${i}`, metadata: { i: String(i) } },
      }),
    );
    created.forEach((response, i) => {
      if (i % 4 < 2) assert.equal(response.status, 200, `request ${i}`);
      else
        assert.deepEqual([response.status, response.body.error_code], [401, 'authentication_required'], `request ${i}`);
    });

    const [redList, blueList] = await Promise.all([
      hangar.request('GET', '/agent/runs?limit=100', { apiKey: red.apiKey }),
      hangar.request('GET', '/agent/runs?limit=100', { apiKey: blue.apiKey }),
    ]);
    type Listed = { prompt: string; creator: { uid: string } };
    const prompts = (list: { body: { runs: Listed[] } }) => list.body.runs.map((run) => run.prompt).sort();
    const expected = (team: number) => created.flatMap((_, i) => (i % 4 === team ? [`burst ${i}`] : [])).sort();
    assert.deepEqual(prompts(redList), expected(0), 'red sees exactly its own runs');
    assert.deepEqual(prompts(blueList), expected(1), 'blue sees exactly its own runs');
    assert.ok((redList.body.runs as Listed[]).every((run) => run.creator.uid === red.userUid));

    // Another team's run is not there for this key, even when both lookups share a statement.
    const blueRun = created[1]!.body.run_id;
    const [asRed, asBlue] = await Promise.all([
      hangar.request('GET', `/agent/runs/${blueRun}`, { apiKey: red.apiKey }),
      hangar.request('GET', `/agent/runs/${blueRun}`, { apiKey: blue.apiKey }),
    ]);
    assert.deepEqual([asRed.status, asBlue.status], [404, 200]);
  });

  test('a key revoked between two bursts is refused by every request of the second', async () => {
    const team = await hangar.createTeamWithUser();
    const other = await hangar.addUser(team.teamUid);
    const key = await hangar.db
      .selectFrom('api_keys')
      .select('uid')
      .where('user_uid', '=', other.userUid)
      .executeTakeFirstOrThrow();
    const before = await burst(20, () => hangar.request('GET', '/agent/runs', { apiKey: other.apiKey }));
    assert.ok(before.every((response) => response.status === 200));

    // The revocation has committed when its answer comes: no request sent after it may pass.
    assert.equal((await hangar.request('DELETE', `/api/v1/admin/api-keys/${key.uid}`)).status, 204);
    const afterwards = await burst(20, () => hangar.request('GET', '/agent/runs', { apiKey: other.apiKey }));
    assert.ok(afterwards.every((response) => response.status === 401));
    // The team's other key is unaffected.
    assert.equal((await hangar.request('GET', '/agent/runs', { apiKey: team.apiKey })).status, 200);
  });

  test('creates written together are each told their own team is at capacity or not', async () => {
    const busy = await hangar.createTeamWithUser();
    const idle = await hangar.createTeamWithUser();
    const running = await hangar.request('POST', '/agent/runs', {
      apiKey: busy.apiKey,
      body: { prompt: 'already running' },
    });
    await hangar.db.updateTable('runs').set({ state: 'INPROGRESS' }).where('id', '=', running.body.run_id).execute();

    const created = await burst(40, (i) =>
      hangar.request('POST', '/agent/runs', {
        apiKey: i % 2 ? idle.apiKey : busy.apiKey,
        body: { prompt: `capacity ${i}` },
      }),
    );
    created.forEach((response, i) => {
      assert.equal(response.status, 200);
      assert.equal(response.body.state, 'QUEUED');
      assert.equal(response.body.at_capacity, i % 2 ? undefined : true, `request ${i}`);
    });
  });
});
