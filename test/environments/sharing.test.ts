import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { newUid } from '../../src/platform/crypto.js';
import { addEnvironment, createRun } from '../support/runs.js';
import { startTestServer, type TestServer } from '../support/server.js';

let hangar: TestServer;
before(async () => (hangar = await startTestServer({}, { role: 'api' })));
after(() => hangar.stop());

async function create(name = 'Shared', apiKey?: string): Promise<string> {
  const response = await hangar.request('POST', '/api/v1/environments', { body: { name }, apiKey });
  assert.equal(response.status, 201, JSON.stringify(response.body));
  return response.body.uid;
}

async function listed(apiKey: string): Promise<Map<string, Record<string, any>>> {
  const response = await hangar.request('GET', '/agent/environments', { apiKey });
  assert.equal(response.status, 200);
  return new Map(response.body.environments.map((environment: { uid: string }) => [environment.uid, environment]));
}

async function runIn(uid: string, apiKey: string): Promise<number> {
  return (
    await hangar.request('POST', '/agent/runs', { body: { prompt: 'x', config: { environment_id: uid } }, apiKey })
  ).status;
}

async function shareLink(uid: string, apiKey?: string): Promise<string> {
  const response = await hangar.request('POST', `/api/v1/environments/${uid}/share-link`, { apiKey });
  assert.equal(response.status, 200, JSON.stringify(response.body));
  assert.equal(response.body.environment_uid, uid);
  return response.body.token;
}

async function join(token: string, apiKey: string) {
  return hangar.request('POST', '/api/v1/environments/join', { body: { token }, apiKey });
}

describe('guest access', () => {
  test('a guest team lists, reads and runs in the environment but cannot change or share it', async () => {
    const uid = await create('Guest env');
    const guest = await hangar.createTeamWithUser({ teamName: 'guests-r-us' });
    assert.equal(await runIn(uid, guest.apiKey), 403);

    const added = await hangar.request('POST', `/api/v1/environments/${uid}/guests`, {
      body: { team_uid: guest.teamUid },
    });
    assert.equal(added.status, 200, JSON.stringify(added.body));
    assert.equal(added.body.sharing.guests.length, 1);
    assert.deepEqual(
      { ...added.body.sharing.guests[0], since: undefined },
      { team_uid: guest.teamUid, team_name: 'guests-r-us', via: 'guest', since: undefined },
    );

    const seen = (await listed(guest.apiKey)).get(uid);
    assert.equal(seen?.access, 'guest');
    assert.deepEqual(seen?.scope, { type: 'Team', uid: hangar.teamUid });
    const read = await hangar.request('GET', `/api/v1/environments/${uid}`, { apiKey: guest.apiKey });
    assert.equal(read.status, 200);
    assert.equal(read.body.sharing, undefined, 'only the owner sees who else has access');
    assert.equal(await runIn(uid, guest.apiKey), 200);

    for (const [method, suffix, body] of [
      ['PUT', '', { name: 'mine now' }],
      ['DELETE', '', undefined],
      ['POST', '/guests', { team_uid: newUid() }],
      ['DELETE', `/guests/${guest.teamUid}`, undefined],
      ['POST', '/share-link', undefined],
    ] as const) {
      const response = await hangar.request(method, `/api/v1/environments/${uid}${suffix}`, {
        body,
        apiKey: guest.apiKey,
      });
      assert.equal(response.status, 403, `${method} ${suffix}`);
      assert.equal(response.body.error_code, 'not_authorized');
    }
  });

  test('removing a guest ends its access; adding twice is harmless', async () => {
    const uid = await create();
    const guest = await hangar.createTeamWithUser();
    for (let i = 0; i < 2; i++) {
      assert.equal(
        (await hangar.request('POST', `/api/v1/environments/${uid}/guests`, { body: { team_uid: guest.teamUid } }))
          .status,
        200,
      );
    }
    assert.equal((await hangar.request('GET', `/api/v1/environments/${uid}`)).body.sharing.guests.length, 1);
    const removed = await hangar.request('DELETE', `/api/v1/environments/${uid}/guests/${guest.teamUid}`);
    assert.equal(removed.status, 204);
    assert.equal((await listed(guest.apiKey)).has(uid), false);
    assert.equal((await hangar.request('GET', `/api/v1/environments/${uid}`, { apiKey: guest.apiKey })).status, 404);
    assert.equal(await runIn(uid, guest.apiKey), 403);
    assert.equal((await hangar.request('DELETE', `/api/v1/environments/${uid}/guests/${guest.teamUid}`)).status, 404);
  });

  test('members of the owning team change the environment; only its admins share it', async () => {
    const uid = await create();
    const member = await hangar.addUser(hangar.teamUid, 'member');
    const other = await hangar.createTeamWithUser();
    assert.equal(
      (
        await hangar.request('PUT', `/api/v1/environments/${uid}`, {
          body: { name: 'by a member' },
          apiKey: member.apiKey,
        })
      ).status,
      200,
    );
    for (const [method, suffix, body] of [
      ['POST', '/guests', { team_uid: other.teamUid }],
      ['DELETE', `/guests/${other.teamUid}`, undefined],
      ['POST', '/share-link', undefined],
    ] as const) {
      const response = await hangar.request(method, `/api/v1/environments/${uid}${suffix}`, {
        body,
        apiKey: member.apiKey,
      });
      assert.equal(response.status, 403, `${method} ${suffix}`);
      assert.match(response.body.detail, /admin/);
    }
    assert.equal(
      (await hangar.request('POST', '/api/v1/environments', { body: { name: 'member-made' }, apiKey: member.apiKey }))
        .status,
      201,
    );
  });

  test('an unknown team is 404; the owning team itself is 400', async () => {
    const uid = await create();
    for (const team of [newUid(), 'not-a-team']) {
      const response = await hangar.request('POST', `/api/v1/environments/${uid}/guests`, { body: { team_uid: team } });
      assert.equal(response.status, 404, team);
    }
    const own = await hangar.request('POST', `/api/v1/environments/${uid}/guests`, {
      body: { team_uid: hangar.teamUid },
    });
    assert.equal(own.status, 400);
    assert.equal((await hangar.request('POST', `/api/v1/environments/${uid}/guests`, { body: {} })).status, 400);
  });

  test('deleting the environment removes it for its guests', async () => {
    const uid = await create();
    const guest = await hangar.createTeamWithUser();
    await hangar.request('POST', `/api/v1/environments/${uid}/guests`, { body: { team_uid: guest.teamUid } });
    assert.equal((await hangar.request('DELETE', `/api/v1/environments/${uid}`)).status, 204);
    assert.equal((await listed(guest.apiKey)).has(uid), false);
  });
});

describe('link sharing', () => {
  test('joining with the token gives the team access; the owner sees it among the guests', async () => {
    const uid = await create('Linked');
    const token = await shareLink(uid);
    assert.match(token, /^hgrenv_[A-Za-z0-9]{40}$/);
    assert.equal((await hangar.request('GET', `/api/v1/environments/${uid}`)).body.sharing.link_active, true);
    const joiner = await hangar.createTeamWithUser();
    assert.equal((await listed(joiner.apiKey)).has(uid), false);

    const joined = await join(token, joiner.apiKey);
    assert.equal(joined.status, 200, JSON.stringify(joined.body));
    assert.equal(joined.body.uid, uid);
    assert.equal(joined.body.access, 'link');
    assert.equal((await listed(joiner.apiKey)).get(uid)?.access, 'link');
    assert.equal(await runIn(uid, joiner.apiKey), 200);
    const guests = (await hangar.request('GET', `/api/v1/environments/${uid}`)).body.sharing.guests;
    assert.deepEqual(
      guests.map((guest: { team_uid: string; via: string }) => [guest.team_uid, guest.via]),
      [[joiner.teamUid, 'link']],
    );
    // Joining again, or joining one's own environment, changes nothing.
    assert.equal((await join(token, joiner.apiKey)).status, 200);
    assert.equal((await join(token, hangar.apiKey)).body.access, 'owner');
  });

  test('a new link invalidates the old token; teams that joined keep access until removed', async () => {
    const uid = await create('Rotated');
    const old = await shareLink(uid);
    const early = await hangar.createTeamWithUser();
    assert.equal((await join(old, early.apiKey)).status, 200);
    const fresh = await shareLink(uid);
    assert.notEqual(fresh, old);

    const late = await hangar.createTeamWithUser();
    const refused = await join(old, late.apiKey);
    assert.equal(refused.status, 404);
    assert.equal(refused.body.error_code, 'resource_not_found');
    assert.equal((await listed(late.apiKey)).has(uid), false);
    assert.equal((await join(fresh, late.apiKey)).status, 200);

    assert.equal((await listed(early.apiKey)).get(uid)?.access, 'link');
    assert.equal((await hangar.request('DELETE', `/api/v1/environments/${uid}/guests/${early.teamUid}`)).status, 204);
    assert.equal((await listed(early.apiKey)).has(uid), false);
    assert.equal(await runIn(uid, early.apiKey), 403);
  });

  test('a guest who joins with the link stays a guest; a link joiner made a guest becomes one', async () => {
    const uid = await create();
    const token = await shareLink(uid);
    const guest = await hangar.createTeamWithUser();
    await hangar.request('POST', `/api/v1/environments/${uid}/guests`, { body: { team_uid: guest.teamUid } });
    assert.equal((await join(token, guest.apiKey)).body.access, 'guest');
    const joiner = await hangar.createTeamWithUser();
    await join(token, joiner.apiKey);
    await hangar.request('POST', `/api/v1/environments/${uid}/guests`, { body: { team_uid: joiner.teamUid } });
    assert.equal((await listed(joiner.apiKey)).get(uid)?.access, 'guest');
  });

  test('an unknown token is 404, a missing one 400', async () => {
    assert.equal((await join('hgrenv_nothing', hangar.apiKey)).status, 404);
    assert.equal((await hangar.request('POST', '/api/v1/environments/join', { body: {} })).status, 400);
    assert.equal((await hangar.request('POST', '/api/v1/environments/join', { body: { token: '' } })).status, 400);
  });
});

describe('runs and accessible environments', () => {
  test("runs accept the team's own, guest and link environments; last_task_created counts the caller's team's runs", async () => {
    const guest = await hangar.createTeamWithUser();
    const shared = await create('Shared runs');
    await hangar.request('POST', `/api/v1/environments/${shared}/guests`, { body: { team_uid: guest.teamUid } });
    await createRun(hangar, { config: { environment_id: shared } }, guest.apiKey);
    const asGuest = (await listed(guest.apiKey)).get(shared)!;
    assert.ok(asGuest.last_task_created);
    // The owner's view counts only the owner's runs: another team's activity is not shown to it.
    assert.equal((await listed(hangar.apiKey)).get(shared)!.last_task_created, undefined);
    // An environment row from before this slice (no creator) is listed and usable too.
    const legacy = await addEnvironment(hangar);
    const legacyItem = (await listed(hangar.apiKey)).get(legacy)!;
    assert.equal(legacyItem.creator, undefined);
    assert.equal(legacyItem.config.name, 'env');
    assert.equal(await runIn(legacy, hangar.apiKey), 200);
  });
});
