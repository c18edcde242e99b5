import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestServer, type TestServer } from '../support/server.js';

// Issue 26: an agent accepted a model the catalogue does not have (the docs' own `--model claude-x`), and two
// agents of a team could share a name.
describe('agent identities are checked like the rest of a team', () => {
  let hangar: TestServer;
  before(async () => {
    hangar = await startTestServer({}, { role: 'api' });
  });
  after(() => hangar.stop());

  test('a model the catalogue does not have is a 400 with the catalogue hint, at create and update', async () => {
    const created = await hangar.request('POST', '/agent/identities', { body: { name: 'a', base_model: 'claude-x' } });
    assert.equal(created.status, 400);
    assert.match(created.body.detail, /base_model: model claude-x is not in this server's catalogue; `hangar models`/);
    const viaHarness = await hangar.request('POST', '/agent/identities', {
      body: { name: 'b', harness: { type: 'claude', model_id: 'nope' } },
    });
    assert.equal(viaHarness.status, 400);
    assert.match(viaHarness.body.detail, /harness\.model_id: model nope/);
    const known = await hangar.request('POST', '/agent/identities', {
      body: { name: 'c', base_model: 'claude-sonnet-4' },
    });
    assert.equal(known.status, 201, JSON.stringify(known.body));
    const updated = await hangar.request('PUT', `/agent/identities/${known.body.uid}`, { body: { base_model: 'x' } });
    assert.equal(updated.status, 400);
  });

  test('names are unique per team (409), at create and rename; another team may use the name', async () => {
    const first = await hangar.request('POST', '/agent/identities', { body: { name: 'Release bot' } });
    assert.equal(first.status, 201);
    const again = await hangar.request('POST', '/agent/identities', { body: { name: ' Release bot ' } });
    assert.equal(again.status, 409);
    assert.match(again.body.detail, /an agent identity named "Release bot" already exists/);
    const other = await hangar.request('POST', '/agent/identities', { body: { name: 'Triage bot' } });
    const renamed = await hangar.request('PUT', `/agent/identities/${other.body.uid}`, {
      body: { name: 'Release bot' },
    });
    assert.equal(renamed.status, 409);
    const team = await hangar.createTeamWithUser();
    const elsewhere = await hangar.request('POST', '/agent/identities', {
      apiKey: team.apiKey,
      body: { name: 'Release bot' },
    });
    assert.equal(elsewhere.status, 201);
  });
});
