import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createRun, setRunColumns } from '../support/runs.js';
import { startTestServer, type TestServer } from '../support/server.js';

let hangar: TestServer;
before(async () => (hangar = await startTestServer()));
after(() => hangar.stop());

const cancel = (runId: string) => hangar.request('POST', `/agent/runs/${runId}/cancel`);

describe('POST /agent/runs/{id}/cancel', () => {
  for (const state of ['QUEUED', 'CLAIMED', 'INPROGRESS']) {
    test(`a ${state} run is cancelled and the answer is its id as a JSON string`, async () => {
      const id = await createRun(hangar);
      await setRunColumns(hangar, id, { state });
      const response = await cancel(id);
      assert.equal(response.status, 200);
      assert.match(response.headers.get('content-type') ?? '', /application\/json/);
      assert.equal(response.body, id);
      const run = (await hangar.request('GET', `/agent/runs/${id}`)).body;
      assert.equal(run.state, 'CANCELLED');
      assert.match(run.status_message.message, /Cancelled by Admin/);
      const events = (await hangar.request('GET', `/agent/runs/${id}/timeline`)).body.events;
      assert.deepEqual(
        events.map((event: { event_type: string }) => event.event_type),
        ['oz_run_created', 'oz_run_cancelled'],
      );
    });
  }

  test('a PENDING run answers 409 conflict, retryable, and stays PENDING', async () => {
    const id = await createRun(hangar);
    await setRunColumns(hangar, id, { state: 'PENDING' });
    const response = await cancel(id);
    assert.equal(response.status, 409);
    assert.equal(response.body.error_code, 'conflict');
    assert.equal(response.body.retryable, true);
    assert.equal((await hangar.request('GET', `/agent/runs/${id}`)).body.state, 'PENDING');
  });

  for (const state of ['SUCCEEDED', 'FAILED', 'ERROR', 'BLOCKED', 'CANCELLED']) {
    test(`a ${state} run answers 400 invalid_request and is unchanged`, async () => {
      const id = await createRun(hangar);
      await setRunColumns(hangar, id, { state });
      const response = await cancel(id);
      assert.equal(response.status, 400);
      assert.equal(response.body.error_code, 'invalid_request');
      assert.equal(response.body.retryable, false);
      assert.equal((await hangar.request('GET', `/agent/runs/${id}`)).body.state, state);
    });
  }

  test('self-hosted, local and source-control action runs answer 422 in any state', async () => {
    const selfHosted = await createRun(hangar, { config: { worker_host: 'build-box-1' } });
    const local = await createRun(hangar);
    await setRunColumns(hangar, local, { source: 'LOCAL', execution_location: 'LOCAL' });
    const action = await createRun(hangar);
    await setRunColumns(hangar, action, { source: 'GITHUB_ACTION', state: 'SUCCEEDED' });
    for (const id of [selfHosted, local, action]) {
      const response = await cancel(id);
      assert.equal(response.status, 422);
      assert.equal(response.body.error_code, 'operation_not_supported');
    }
    assert.equal((await hangar.request('GET', `/agent/runs/${selfHosted}`)).body.state, 'QUEUED');
  });

  test('an unknown run is 404', async () => {
    const response = await cancel('00000000-0000-0000-0000-000000000000');
    assert.equal(response.status, 404);
    assert.equal(response.body.error_code, 'resource_not_found');
  });

  test('of concurrent cancels exactly one wins', async () => {
    for (let round = 0; round < 5; round++) {
      const id = await createRun(hangar);
      const responses = await Promise.all(Array.from({ length: 6 }, () => cancel(id)));
      const statuses = responses.map((response) => response.status).sort();
      assert.deepEqual(statuses, [200, 400, 400, 400, 400, 400]);
      const events = (await hangar.request('GET', `/agent/runs/${id}/timeline`)).body.events;
      assert.equal(events.filter((event: { event_type: string }) => event.event_type === 'oz_run_cancelled').length, 1);
    }
  });

  test('a member can cancel a team run; another team cannot see it', async () => {
    const id = await createRun(hangar);
    const member = await hangar.addUser(hangar.teamUid, 'member');
    const stranger = await hangar.createTeamWithUser();
    assert.equal((await hangar.request('POST', `/agent/runs/${id}/cancel`, { apiKey: stranger.apiKey })).status, 404);
    assert.equal((await hangar.request('POST', `/agent/runs/${id}/cancel`, { apiKey: member.apiKey })).status, 200);
  });
});
