import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestServer, type TestServer } from '../support/server.js';

// Issue 52, field 3: runners, a team's named sandbox kind and shape. The fields checked here are Oz's as its public
// OpenAPI document describes them (config.runner_id on a run: the runner's UID, resolved at creation from the agent's
// default, then the environment's, and recorded; default_runner_uid on an agent: a string, empty when unset, cleared
// by an empty string, left by null), and Hangar's own resource under /runners.
let hangar: TestServer;
let serverKind: string;

before(async () => {
  hangar = await startTestServer({}, { role: 'api' });
  serverKind = (await hangar.request('GET', '/api/v1/runners')).body.default.sandbox;
});
after(() => hangar.stop());

const UID = /^[A-Za-z0-9]{22}$/;
const KINDS = ['bwrap', 'process', 'container', 'kubernetes'];

async function runner(apiKey: string, body: Record<string, unknown> = {}) {
  const created = await hangar.request('POST', '/api/v1/runners', {
    apiKey,
    body: { name: `r-${Math.random().toString(36).slice(2, 8)}`, ...body },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  return created.body as { uid: string; name: string };
}

async function runConfig(apiKey: string, body: Record<string, unknown>) {
  const created = await hangar.request('POST', '/agent/runs', { apiKey, body: { prompt: 'shape', ...body } });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  const run = await hangar.request('GET', `/agent/runs/${created.body.run_id}`, { apiKey });
  return run.body.agent_config as Record<string, any>;
}

async function environment(apiKey: string, config: Record<string, unknown> = {}) {
  const created = await hangar.request('POST', '/api/v1/environments', {
    apiKey,
    body: { name: `env-${Math.random().toString(36).slice(2, 8)}`, ...config },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  return created.body as { uid: string; config: Record<string, unknown> };
}

test('a runner is created, listed beside the operator default, read, replaced and deleted', async () => {
  const team = await hangar.createTeamWithUser();
  const made = await hangar.request('POST', '/api/v1/runners', {
    apiKey: team.apiKey,
    body: {
      name: ' small ',
      description: 'one CPU',
      sandbox: serverKind,
      limits: { cpus: 0.5, memory: '256m', pids: 64 },
    },
  });
  assert.equal(made.status, 201, JSON.stringify(made.body));
  assert.match(made.body.uid, UID);
  assert.equal(made.body.name, 'small');
  assert.equal(made.body.description, 'one CPU');
  assert.equal(made.body.sandbox, serverKind);
  assert.deepEqual(made.body.limits, { cpus: 0.5, memory: '256m', pids: 64 });
  assert.equal(typeof made.body.created_at, 'string');
  assert.ok(!Number.isNaN(Date.parse(made.body.updated_at)));

  const list = await hangar.request('GET', '/api/v1/runners', { apiKey: team.apiKey });
  assert.equal(list.status, 200);
  assert.deepEqual(
    list.body.runners.map((item: { uid: string }) => item.uid),
    [made.body.uid],
  );
  const fallback = list.body.default;
  assert.ok(KINDS.includes(fallback.sandbox));
  assert.equal(typeof fallback.limits.cpus, 'number');
  assert.equal(typeof fallback.limits.memory, 'string');
  assert.ok(Number.isInteger(fallback.limits.pids));
  assert.equal(typeof fallback.maximums.cpus, 'number');

  const replaced = await hangar.request('PUT', `/api/v1/runners/${made.body.uid}`, {
    apiKey: team.apiKey,
    body: { name: 'small', limits: { memory: '512m' } },
  });
  assert.equal(replaced.status, 200, JSON.stringify(replaced.body));
  assert.deepEqual(replaced.body.limits, { memory: '512m' });
  assert.equal(replaced.body.sandbox, undefined, 'a PUT replaces the whole runner');
  assert.equal(replaced.body.description, '');

  const twin = await hangar.request('POST', '/api/v1/runners', { apiKey: team.apiKey, body: { name: 'small' } });
  assert.equal(twin.status, 409);

  const deleted = await hangar.request('DELETE', `/api/v1/runners/${made.body.uid}`, { apiKey: team.apiKey });
  assert.equal(deleted.status, 204);
  const gone = await hangar.request('GET', `/api/v1/runners/${made.body.uid}`, { apiKey: team.apiKey });
  assert.equal(gone.status, 404);
});

test("another team's runner is a missing one: in the API, in a run, as an agent's or environment's default", async () => {
  const owner = await hangar.createTeamWithUser();
  const other = await hangar.createTeamWithUser();
  const theirs = await runner(owner.apiKey);
  const missing = 'A'.repeat(22);
  const words = (detail: string, uid: string) => detail.replace(uid, '<uid>');

  for (const [method, body] of [
    ['GET', undefined],
    ['PUT', { name: 'mine now' }],
    ['DELETE', undefined],
  ] as const) {
    const foreign = await hangar.request(method, `/api/v1/runners/${theirs.uid}`, { apiKey: other.apiKey, body });
    const absent = await hangar.request(method, `/api/v1/runners/${missing}`, { apiKey: other.apiKey, body });
    assert.equal(foreign.status, 404, `${method}: ${JSON.stringify(foreign.body)}`);
    assert.equal(absent.status, 404);
    assert.equal(words(foreign.body.detail, theirs.uid), words(absent.body.detail, missing));
  }
  assert.deepEqual((await hangar.request('GET', '/api/v1/runners', { apiKey: other.apiKey })).body.runners, []);
  assert.equal((await hangar.request('GET', `/api/v1/runners/${theirs.uid}`, { apiKey: owner.apiKey })).status, 200);

  const inRun = (uid: string) =>
    hangar.request('POST', '/agent/runs', { apiKey: other.apiKey, body: { prompt: 'x', config: { runner_id: uid } } });
  const [foreignRun, absentRun] = [await inRun(theirs.uid), await inRun(missing)];
  assert.equal(foreignRun.status, 403);
  assert.equal(foreignRun.body.error_code, 'not_authorized');
  assert.equal(absentRun.status, 403);
  assert.equal(words(foreignRun.body.detail, theirs.uid), words(absentRun.body.detail, missing));

  const agent = (uid: string) =>
    hangar.request('POST', '/agent/identities', {
      apiKey: other.apiKey,
      body: { name: `bot-${uid.slice(0, 4)}`, default_runner_uid: uid },
    });
  const [foreignAgent, absentAgent] = [await agent(theirs.uid), await agent(missing)];
  assert.equal(foreignAgent.status, 400, JSON.stringify(foreignAgent.body));
  assert.equal(words(foreignAgent.body.detail, theirs.uid), words(absentAgent.body.detail, missing));

  const env = await hangar.request('POST', '/api/v1/environments', {
    apiKey: other.apiKey,
    body: { name: 'theirs', default_runner_uid: theirs.uid },
  });
  assert.equal(env.status, 400, JSON.stringify(env.body));
  assert.match(env.body.detail, /does not exist in this team/);
});

test('a runner asks only for what the server runs and allows', async () => {
  const team = await hangar.createTeamWithUser();
  const refused = async (body: Record<string, unknown>, words: RegExp) => {
    const response = await hangar.request('POST', '/api/v1/runners', {
      apiKey: team.apiKey,
      body: { name: 'x', ...body },
    });
    assert.equal(response.status, 400, JSON.stringify(response.body));
    assert.equal(response.body.error_code, 'invalid_request');
    assert.match(response.body.detail, words);
  };
  const otherKind = KINDS.find((kind) => kind !== serverKind)!;
  await refused({ sandbox: otherKind }, /HANGAR_SANDBOX/);
  await refused({ sandbox: 'firecracker' }, /sandbox/);
  const { maximums } = (await hangar.request('GET', '/api/v1/runners', { apiKey: team.apiKey })).body.default;
  await refused({ limits: { cpus: maximums.cpus + 1 } }, /HANGAR_RUN_CPUS_MAX/);
  await refused({ limits: { memory: '1000t' } }, /HANGAR_RUN_MEMORY_MAX/);
  await refused({ limits: { memory: 'lots' } }, /not a size/);
  await refused({ limits: { pids: 10_000_000 } }, /pids/);
  await refused({ name: '   ' }, /blank/);
  // The test server does not run Kubernetes: a runtime class or a pod template means nothing to it.
  await refused({ kubernetes: { runtime_class_name: 'gvisor' } }, /kubernetes sandbox/);
});

test('the runner is resolved run, then agent, then environment, then none, and recorded with its shape', async () => {
  const team = await hangar.createTeamWithUser();
  const forRun = await runner(team.apiKey, { limits: { cpus: 0.25 } });
  const forAgent = await runner(team.apiKey, { limits: { pids: 100 } });
  const forEnvironment = await runner(team.apiKey, { limits: { memory: '128m' } });
  const env = await environment(team.apiKey, { default_runner_uid: forEnvironment.uid });
  assert.equal(env.config.default_runner_uid, forEnvironment.uid);
  const bare = await environment(team.apiKey);
  assert.equal(bare.config.default_runner_uid, undefined);

  const agent = await hangar.request('POST', '/agent/identities', {
    apiKey: team.apiKey,
    body: { name: 'shaped', default_runner_uid: forAgent.uid },
  });
  assert.equal(agent.status, 201, JSON.stringify(agent.body));
  assert.equal(agent.body.default_runner_uid, forAgent.uid);
  const plainAgent = await hangar.request('POST', '/agent/identities', {
    apiKey: team.apiKey,
    body: { name: 'plain' },
  });
  assert.equal(plainAgent.body.default_runner_uid, '', 'a string, empty when unset');

  const named = await runConfig(team.apiKey, {
    agent_identity_uid: agent.body.uid,
    config: { runner_id: forRun.uid, environment_id: env.uid },
  });
  assert.equal(named.runner_id, forRun.uid);
  assert.equal(named.runner.name, forRun.name);
  assert.deepEqual(named.runner.limits, { cpus: 0.25 });

  const byAgent = await runConfig(team.apiKey, {
    agent_identity_uid: agent.body.uid,
    config: { environment_id: env.uid },
  });
  assert.equal(byAgent.runner_id, forAgent.uid);
  assert.deepEqual(byAgent.runner.limits, { pids: 100 });

  const byEnvironment = await runConfig(team.apiKey, {
    agent_identity_uid: plainAgent.body.uid,
    config: { environment_id: env.uid },
  });
  assert.equal(byEnvironment.runner_id, forEnvironment.uid);
  assert.deepEqual(byEnvironment.runner.limits, { memory: '128m' });

  const none = await runConfig(team.apiKey, { config: { environment_id: bare.uid } });
  assert.equal(none.runner_id, undefined, "the operator's default: no runner recorded");
  assert.equal(none.runner, undefined);

  // A shape sent with the request is Hangar's to record, not the caller's to choose.
  const forged = await runConfig(team.apiKey, { config: { runner: { name: 'huge', limits: { cpus: 512 } } } });
  assert.equal(forged.runner, undefined);

  // The run keeps the shape it recorded; later runs take the runner as it is now.
  await hangar.request('PUT', `/api/v1/runners/${forRun.uid}`, {
    apiKey: team.apiKey,
    body: { name: forRun.name, limits: { cpus: 0.75 } },
  });
  const later = await runConfig(team.apiKey, { config: { runner_id: forRun.uid } });
  assert.deepEqual(later.runner.limits, { cpus: 0.75 });
  assert.deepEqual(named.runner.limits, { cpus: 0.25 });
});

test("an agent's default runner: null leaves it, an empty string clears it, a deleted one refuses its runs", async () => {
  const team = await hangar.createTeamWithUser();
  const first = await runner(team.apiKey);
  const agent = await hangar.request('POST', '/agent/identities', {
    apiKey: team.apiKey,
    body: { name: 'keeper', default_runner_uid: first.uid },
  });
  const path = `/agent/identities/${agent.body.uid}`;
  const kept = await hangar.request('PUT', path, { apiKey: team.apiKey, body: { default_runner_uid: null } });
  assert.equal(kept.body.default_runner_uid, first.uid);

  await hangar.request('DELETE', `/api/v1/runners/${first.uid}`, { apiKey: team.apiKey });
  const refused = await hangar.request('POST', '/agent/runs', {
    apiKey: team.apiKey,
    body: { prompt: 'x', agent_identity_uid: agent.body.uid },
  });
  assert.equal(refused.status, 400, JSON.stringify(refused.body));
  assert.match(refused.body.detail, /no longer exists/);

  const cleared = await hangar.request('PUT', path, { apiKey: team.apiKey, body: { default_runner_uid: '' } });
  assert.equal(cleared.status, 200, JSON.stringify(cleared.body));
  assert.equal(cleared.body.default_runner_uid, '');
  const runs = await runConfig(team.apiKey, { agent_identity_uid: agent.body.uid });
  assert.equal(runs.runner_id, undefined);
});
