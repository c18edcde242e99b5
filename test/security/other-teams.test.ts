import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { newUid } from '../../src/platform/crypto.js';
import { addAgentIdentity, addEnvironment, createRun } from '../support/runs.js';
import { startTestServer, type TestServer } from '../support/server.js';

// Whatever belongs to another team must answer exactly like something that does not exist: a 403 instead of a
// 404 tells a prober that the id is real.
let hangar: TestServer;
let other: { teamUid: string; apiKey: string };
before(async () => {
  hangar = await startTestServer();
  other = await hangar.createTeamWithUser({ role: 'admin' });
});
after(() => hangar.stop());

test('every resource of another team answers like a missing one (same status and error code)', async () => {
  const as = (apiKey: string) => (method: string, path: string, body?: unknown) =>
    hangar.request(method, `/api/v1${path}`, { apiKey, body });
  const theirs = as(other.apiKey);
  const runId = await createRun(hangar, { prompt: 'theirs', config: {} }, other.apiKey);
  const conversationId = randomUUID();
  await hangar.db.updateTable('runs').set({ conversation_id: conversationId }).where('id', '=', runId).execute();
  const artifactUid = randomUUID();
  await hangar.db
    .insertInto('artifacts')
    .values({
      uid: artifactUid,
      run_id: runId,
      team_uid: other.teamUid,
      artifact_type: 'PLAN',
      data: JSON.stringify({ title: 'p' }),
    })
    .execute();
  const schedule = await theirs('POST', '/agent/schedules', {
    name: 's',
    cron_schedule: '0 0 1 1 *',
    prompt: 'p',
    enabled: true,
  });
  assert.equal(schedule.status, 201);
  const mcp = await theirs('POST', '/mcp-servers', { name: 'm', url: 'https://mcp.example.com/mcp' });
  assert.equal(mcp.status, 201);
  const webhook = await theirs('POST', '/factory/webhooks', { name: 'w' });
  assert.equal(webhook.status, 201);
  const automation = await theirs('POST', '/factory/automations', {
    name: 'a',
    prompt: 'p',
    enabled: true,
    triggers: [{ provider: 'webhook', event: 'received', filter: { webhook_ids: [webhook.body.uid] } }],
  });
  assert.equal(automation.status, 201, JSON.stringify(automation.body));
  const environment = await addEnvironment(hangar, other.teamUid);
  const agent = await addAgentIdentity(hangar, other.teamUid);
  assert.equal((await theirs('POST', '/secrets', { name: 'THEIRS', value: 'v' })).status, 201);

  const scorer = (
    await as(hangar.apiKey)('POST', '/agent/scorers', {
      name: 'q',
      rubric: 'r',
      labels: [{ label: 'good', score: 1 }],
      passing_score: 1,
    })
  ).body?.scorer_id;

  // Each probe with the other team's id, then with an id of the same shape that names nothing.
  const ids = {
    run: [runId, randomUUID()],
    conversation: [conversationId, randomUUID()],
    artifact: [artifactUid, randomUUID()],
    schedule: [schedule.body.id, randomUUID()],
    mcp: [mcp.body.uid, newUid()],
    webhook: [webhook.body.uid, newUid()],
    automation: [automation.body.id, randomUUID()],
    environment: [environment, newUid()],
    agent: [agent, newUid()],
  } as const;
  const probes: Array<[string, string, (id: string) => string, unknown?]> = [
    ['GET', 'run', (id) => `/agent/runs/${id}`],
    ['GET', 'run', (id) => `/agent/runs/${id}/timeline`],
    ['GET', 'run', (id) => `/agent/runs/${id}/conversation`],
    ['GET', 'run', (id) => `/agent/runs/${id}/transcript`],
    ['POST', 'run', (id) => `/agent/runs/${id}/cancel`],
    ['POST', 'run', (id) => `/agent/runs/${id}/followups`, { message: 'hi' }],
    ['POST', 'run', (id) => `/agent/runs/${id}/judge`, { scorer_ids: [scorer] }],
    ['GET', 'run', (id) => `/agent/runs?ancestor_run_id=${id}`],
    ['GET', 'run', (id) => `/agent/run-by-external-reference?url=${encodeURIComponent(`${hangar.url}/runs/${id}`)}`],
    [
      'POST',
      'webhook',
      () => '/factory/automations',
      {
        name: 'x',
        prompt: 'p',
        enabled: true,
        triggers: [{ provider: 'webhook', event: 'received', filter: { webhook_ids: ['ID'] } }],
      },
    ],
    [
      'POST',
      'agent',
      () => '/agent/schedules',
      { name: 'x', cron_schedule: '0 0 1 1 *', prompt: 'p', enabled: true, agent_uid: 'ID' },
    ],
    ['PUT', 'environment', (id) => `/environments/${id}`, { name: 'mine now' }],
    ['POST', 'environment', (id) => `/environments/${id}/guests`, { team_uid: 'x' }],
    ['POST', 'mcp', (id) => `/mcp-servers/${id}/shares`, { team_uid: 'x' }],
    ['GET', 'conversation', (id) => `/agent/conversations/${id}`],
    ['GET', 'conversation', (id) => `/agent/conversations/${id}/transcript`],
    ['GET', 'artifact', (id) => `/agent/artifacts/${id}`],
    ['GET', 'artifact', (id) => `/agent/artifacts/${id}/download`],
    ['GET', 'schedule', (id) => `/agent/schedules/${id}`],
    ['POST', 'schedule', (id) => `/agent/schedules/${id}/pause`],
    ['DELETE', 'schedule', (id) => `/agent/schedules/${id}`],
    ['GET', 'mcp', (id) => `/mcp-servers/${id}`],
    ['DELETE', 'mcp', (id) => `/mcp-servers/${id}`],
    ['GET', 'webhook', (id) => `/factory/webhooks/${id}`],
    ['GET', 'webhook', (id) => `/factory/webhooks/${id}/deliveries`],
    ['POST', 'webhook', (id) => `/factory/webhooks/${id}/rotate`],
    ['GET', 'automation', (id) => `/factory/automations/${id}`],
    ['GET', 'environment', (id) => `/environments/${id}`],
    ['DELETE', 'environment', (id) => `/environments/${id}`],
    ['GET', 'agent', (id) => `/agent/identities/${id}`],
    ['DELETE', 'agent', (id) => `/agent/identities/${id}`],
  ];
  const ours = as(hangar.apiKey);
  const differences: string[] = [];
  for (const [method, kind, path, body] of probes) {
    const [real, unknown] = ids[kind as keyof typeof ids];
    const withId = (id: string) =>
      body === undefined ? undefined : JSON.parse(JSON.stringify(body).replaceAll('"ID"', JSON.stringify(id)));
    const a = await ours(method, path(real), withId(real));
    const b = await ours(method, path(unknown), withId(unknown));
    if (a.status !== b.status || a.body?.error_code !== b.body?.error_code)
      differences.push(
        `${method} ${path(':id')}: theirs ${a.status} ${a.body?.error_code}, none ${b.status} ${b.body?.error_code}`,
      );
  }
  // Runs naming another team's things.
  const references: Array<[string, (id: string) => Record<string, unknown>]> = [
    ['run', (id) => ({ parent_run_id: id })],
    ['conversation', (id) => ({ conversation_id: id })],
    ['environment', (id) => ({ config: { environment_id: id } })],
    ['mcp', (id) => ({ config: { mcp_servers: { m: { warp_id: id } } } })],
    ['agent', (id) => ({ agent_identity_uid: id })],
  ];
  for (const [kind, body] of references) {
    const [real, unknown] = ids[kind as keyof typeof ids];
    const a = await ours('POST', '/agent/runs', { prompt: 'p', ...body(real) });
    const b = await ours('POST', '/agent/runs', { prompt: 'p', ...body(unknown) });
    if (a.status !== b.status || a.body?.error_code !== b.body?.error_code)
      differences.push(`POST /agent/runs ${Object.keys(body(''))[0]}: theirs ${a.status}, none ${b.status}`);
  }
  assert.deepEqual(differences, []);
});
