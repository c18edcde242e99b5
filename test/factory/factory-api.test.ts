/**
 * The public factory API over HTTP: GET /factory?search=, GET /factory/{uid} and POST /factory/{uid}/runs against a
 * factory made from a definition directory with a `foreman` agent. Shapes as the public factory API gives them: a
 * factory's string `uid`, `name`, `team_uid`, `created_at`, `updated_at`, nullable `description`, `alias`,
 * `avatar_url`, `default_environment`, `default_model`, `integrations`, `code_forge` (and each of `code_forges`) one
 * of GITHUB, GITLAB, AZURE_DEVOPS, NONE, `credential_strategy` one of CREATOR, EXECUTOR, array `repositories`,
 * objects `agent_defaults`, `scorer_defaults`, `scoring`; the list's `factories`; a dispatch's string `factory_uid`,
 * `foreman_agent`, `run_id`, `ticket_ref`, `run_url` and a run-state `state`. Another team's factory is the 404 of a
 * missing one; no static route under /factory/ has the shape of a factory UID.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { servedRoutes } from '../support/routes.js';
import { startTestServer, type TestServer } from '../support/server.js';

const UID = /^[A-Za-z0-9]{22}$/;
const RUN_STATES = [
  'QUEUED',
  'PENDING',
  'CLAIMED',
  'INPROGRESS',
  'SUCCEEDED',
  'FAILED',
  'BLOCKED',
  'ERROR',
  'CANCELLED',
];
let hangar: TestServer;
let factoryUid: string;
let foremanUid: string;

before(async () => {
  hangar = await startTestServer();
  const applied = await hangar.request('POST', '/api/v1/factory/definitions/apply', {
    body: {
      files: {
        'factory.yaml': 'name: Release Train\ndescription: Ships releases\n',
        'agents/foreman/agent.md': '---\ndescription: Takes the work\n---\nYou plan the work.\n',
      },
    },
  });
  assert.equal(applied.status, 200, JSON.stringify(applied.body));
  factoryUid = applied.body.factory.uid;
  foremanUid = applied.body.changes.find((change: any) => change.kind === 'agent').uid;
});

after(async () => {
  await hangar?.stop();
});

function assertFactoryShape(factory: Record<string, any>): void {
  for (const key of ['uid', 'name', 'team_uid', 'created_at', 'updated_at'])
    assert.equal(typeof factory[key], 'string', key);
  assert.match(factory.uid, UID);
  for (const key of ['description', 'alias', 'avatar_url', 'default_environment', 'default_model'])
    assert.ok(factory[key] === null || typeof factory[key] === 'string', key);
  assert.ok(factory.integrations === null || Array.isArray(factory.integrations));
  const forges = ['GITHUB', 'GITLAB', 'AZURE_DEVOPS', 'NONE'];
  assert.ok(forges.includes(factory.code_forge));
  assert.ok(Array.isArray(factory.code_forges));
  for (const forge of factory.code_forges) assert.ok(forges.includes(forge));
  assert.ok(['CREATOR', 'EXECUTOR'].includes(factory.credential_strategy));
  assert.ok(Array.isArray(factory.repositories));
  for (const key of ['agent_defaults', 'scorer_defaults', 'scoring']) assert.equal(typeof factory[key], 'object', key);
  assert.equal(typeof factory.agent_defaults.default_runner_uid, 'string');
  assert.equal(typeof factory.agent_defaults.worker_host, 'string');
  assert.ok(Array.isArray(factory.agent_defaults.secrets));
  assert.equal(typeof factory.agent_defaults.mcp_servers, 'object');
  assert.ok(factory.scoring.default_model === null || typeof factory.scoring.default_model === 'string');
}

test('the list finds factories by a case-insensitive part of their name', async () => {
  const all = await hangar.request('GET', '/api/v1/factory');
  assert.equal(all.status, 200);
  assert.ok(Array.isArray(all.body.factories));
  for (const factory of all.body.factories) assertFactoryShape(factory);
  assert.deepEqual(all.body.factories.map((factory: any) => factory.name).sort(), ['Release Train', 'default']);
  const found = await hangar.request('GET', '/api/v1/factory?search=rELEASE%20t');
  assert.deepEqual(
    found.body.factories.map((factory: any) => factory.uid),
    [factoryUid],
  );
  assert.equal(found.body.factories[0].foreman_agent, 'foreman');
  assert.deepEqual((await hangar.request('GET', '/api/v1/factory?search=nothing-like-it')).body.factories, []);
});

test('a factory by UID; another team sees it as missing', async () => {
  const got = await hangar.request('GET', `/api/v1/factory/${factoryUid}`);
  assert.equal(got.status, 200);
  assertFactoryShape(got.body);
  assert.equal(got.body.name, 'Release Train');
  assert.equal(got.body.description, 'Ships releases');

  const other = await hangar.createTeamWithUser();
  const theirs = await hangar.request('GET', `/api/v1/factory/${factoryUid}`, { apiKey: other.apiKey });
  const missing = await hangar.request('GET', `/api/v1/factory/${'x'.repeat(22)}`, { apiKey: other.apiKey });
  assert.equal(theirs.status, 404);
  assert.equal(missing.status, 404);
  assert.equal(theirs.body.error_code, missing.body.error_code);
  assert.ok(!JSON.stringify(theirs.body).includes('Release'));
  const dispatched = await hangar.request('POST', `/api/v1/factory/${factoryUid}/runs`, {
    apiKey: other.apiKey,
    body: { prompt: 'take it over' },
  });
  assert.equal(dispatched.status, 404);
  const runs = await hangar.request('GET', '/api/v1/agent/runs', { apiKey: other.apiKey });
  assert.deepEqual(runs.body.runs, []);
});

test('a dispatch makes a run for the foreman with the ticket stamped on it', async () => {
  const answer = await hangar.request('POST', `/api/v1/factory/${factoryUid}/runs`, {
    body: {
      prompt: 'Ship 2.3',
      title: 'Release 2.3',
      ticket_ref: 'linear:ENG-123',
      ticket_url: 'https://linear.app/acme/issue/ENG-123',
    },
  });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  for (const key of ['factory_uid', 'foreman_agent', 'run_id', 'state', 'ticket_ref', 'run_url'])
    assert.equal(typeof answer.body[key], 'string', key);
  assert.ok(RUN_STATES.includes(answer.body.state));
  assert.equal(answer.body.factory_uid, factoryUid);
  assert.equal(answer.body.foreman_agent, 'foreman');
  assert.equal(answer.body.ticket_ref, 'linear:ENG-123');
  assert.equal(answer.body.run_url, `${hangar.url}/runs/${answer.body.run_id}`);

  const run = (await hangar.request('GET', `/api/v1/agent/runs/${answer.body.run_id}`)).body;
  assert.equal(run.prompt, 'Ship 2.3');
  assert.equal(run.title, 'Release 2.3');
  assert.equal(run.executor.uid, foremanUid);
  assert.deepEqual(
    {
      ticket_source: run.metadata.ticket_source,
      ticket_id: run.metadata.ticket_id,
      ticket_url: run.metadata.ticket_url,
    },
    { ticket_source: 'linear', ticket_id: 'ENG-123', ticket_url: 'https://linear.app/acme/issue/ENG-123' },
  );
});

test('without a ticket a dispatch gets an adhoc reference; bad input is a 400', async () => {
  const answer = await hangar.request('POST', `/api/v1/factory/${factoryUid}/runs`, { body: { prompt: 'Tidy up' } });
  assert.equal(answer.status, 200);
  assert.match(answer.body.ticket_ref, /^adhoc:[A-Za-z0-9_-]+$/);
  for (const body of [{}, { prompt: '' }, { prompt: 'x', ticket_ref: 'no-colon' }, { prompt: 'x', extra: 1 }])
    assert.equal(
      (await hangar.request('POST', `/api/v1/factory/${factoryUid}/runs`, { body })).status,
      400,
      JSON.stringify(body),
    );
});

test('no static route under /factory/ can be taken for a factory UID, and each still answers', async () => {
  const segments = new Set<string>();
  for (const route of servedRoutes(hangar.server.app)) {
    const match = /^\/api\/v1\/factory\/([^/:]+)/.exec(route.url);
    if (match) segments.add(match[1]!);
  }
  assert.ok(segments.has('webhooks') && segments.has('automations'), [...segments].join(', '));
  for (const segment of segments) assert.doesNotMatch(segment, UID, segment);
  // The static routes keep their answers; a segment of another shape is not taken for a factory.
  assert.ok(Array.isArray((await hangar.request('GET', '/api/v1/factory/webhooks')).body.webhooks));
  assert.ok(Array.isArray((await hangar.request('GET', '/api/v1/factory/automations')).body.automations));
  const wrongShape = await hangar.request('POST', '/api/v1/factory/webhooks/runs', { body: { prompt: 'x' } });
  assert.ok([400, 404].includes(wrongShape.status), String(wrongShape.status));
  // Every factory the server made has the shape.
  const rows = await hangar.db.selectFrom('factories').select('uid').execute();
  for (const row of rows) assert.match(row.uid, UID);
});
