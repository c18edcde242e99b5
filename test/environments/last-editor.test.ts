import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestServer, type TestServer } from '../support/server.js';

let hangar: TestServer;
before(async () => (hangar = await startTestServer({}, { role: 'api' })));
after(() => hangar.stop());

// Oz's environment carries `last_editor` beside `creator`, both a principal: `type` one of user or
// service_account, a `uid`, and the optional `display_name` and `email`.
describe('environments: last_editor (issue 52, field 8)', () => {
  test('the creator is the last editor until someone else changes the config; then that person is', async () => {
    const team = await hangar.createTeamWithUser();
    const member = await hangar.addUser(team.teamUid, 'member');
    const created = await hangar.request('POST', '/api/v1/environments', {
      apiKey: team.apiKey,
      body: { name: 'Web', setup_commands: ['true'] },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.deepEqual(created.body.last_editor, created.body.creator);
    assert.equal(created.body.last_editor.type, 'user');
    assert.equal(created.body.last_editor.uid, team.userUid);

    const edited = await hangar.request('PUT', `/api/v1/environments/${created.body.uid}`, {
      apiKey: member.apiKey,
      body: { name: 'Web 2' },
    });
    assert.equal(edited.status, 200, JSON.stringify(edited.body));
    assert.equal(edited.body.creator.uid, team.userUid, 'the creator stays');
    assert.equal(edited.body.last_editor.type, 'user');
    assert.equal(edited.body.last_editor.uid, member.userUid);
    assert.equal(typeof edited.body.last_editor.display_name, 'string');
    for (const key of Object.keys(edited.body.last_editor))
      assert.ok(['type', 'uid', 'display_name', 'email'].includes(key), key);

    const listed = await hangar.request('GET', '/agent/environments', { apiKey: team.apiKey });
    const item = listed.body.environments.find((environment: { uid: string }) => environment.uid === created.body.uid);
    assert.deepEqual(item.last_editor, edited.body.last_editor);
  });

  test('an edit refused (a member of another team) changes no last_editor', async () => {
    const team = await hangar.createTeamWithUser();
    const other = await hangar.createTeamWithUser();
    const created = await hangar.request('POST', '/api/v1/environments', { apiKey: team.apiKey, body: { name: 'E' } });
    const refused = await hangar.request('PUT', `/api/v1/environments/${created.body.uid}`, {
      apiKey: other.apiKey,
      body: { name: 'Taken' },
    });
    assert.equal(refused.status, 404);
    const after = await hangar.request('GET', `/api/v1/environments/${created.body.uid}`, { apiKey: team.apiKey });
    assert.equal(after.body.last_editor.uid, team.userUid);
  });
});
