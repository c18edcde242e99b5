import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { insertMembership } from '../../src/identities/store.js';
import { generateApiKey, hashApiKey } from '../../src/platform/crypto.js';
import { spawnKeyedServer, stopChild } from '../support/processes.js';
import { createTestDatabase, startTestServer, type TestServer } from '../support/server.js';

const PROBLEM_MEMBERS = [
  'type',
  'title',
  'status',
  'detail',
  'instance',
  'error',
  'error_code',
  'retryable',
  'trace_id',
].sort();

interface Reply {
  status: number;
  headers: Headers;
  body: any;
}

/** Asserts the reply is an RFC 7807 problem with the members wire-details.md lists, and returns the body. */
function assertProblem(reply: Reply, status: number, code: string, instance?: string): any {
  assert.equal(reply.status, status, `expected ${status} ${code}, got ${reply.status} ${JSON.stringify(reply.body)}`);
  assert.match(reply.headers.get('content-type') ?? '', /^application\/problem\+json/);
  const problem = reply.body;
  assert.deepEqual(Object.keys(problem).sort(), PROBLEM_MEMBERS);
  assert.equal(problem.status, status);
  assert.equal(problem.error_code, code);
  assert.ok(problem.type.endsWith(`/errors/${code}`), `type ${problem.type}`);
  assert.equal(typeof problem.title, 'string');
  assert.ok(problem.title.length > 0);
  assert.equal(typeof problem.detail, 'string');
  assert.ok(problem.detail.length > 0);
  assert.equal(problem.error, `${problem.title}: ${problem.detail}`);
  assert.equal(typeof problem.retryable, 'boolean');
  assert.equal(typeof problem.trace_id, 'string');
  assert.ok(problem.trace_id.length > 0);
  assert.equal(reply.headers.get('x-request-id'), problem.trace_id);
  if (instance !== undefined) assert.equal(problem.instance, instance);
  return problem;
}

/** Every operation of spec/service-interface.md (Endpoints), as the OpenAPI document spells its path. */
const INTERFACE_OPERATIONS: Array<[method: string, path: string]> = [
  ['GET', '/agent'],
  ['GET', '/agent/connected-self-hosted-workers'],
  ['POST', '/agent/runs'],
  ['POST', '/agent/run'],
  ['GET', '/agent/runs'],
  ['GET', '/agent/run-by-external-reference'],
  ['GET', '/agent/runs/{runId}'],
  ['GET', '/agent/runs/{runId}/timeline'],
  ['GET', '/agent/runs/{runId}/conversation'],
  ['GET', '/agent/runs/{runId}/transcript'],
  ['POST', '/agent/runs/{runId}/cancel'],
  ['POST', '/agent/runs/{runId}/followups'],
  ['POST', '/agent/runs/{runId}/scores'],
  ['GET', '/agent/conversations/{conversationId}'],
  ['GET', '/agent/conversations/{conversationId}/transcript'],
  ['POST', '/agent/schedules'],
  ['GET', '/agent/schedules'],
  ['GET', '/agent/schedules/{scheduleId}'],
  ['PUT', '/agent/schedules/{scheduleId}'],
  ['DELETE', '/agent/schedules/{scheduleId}'],
  ['POST', '/agent/schedules/{scheduleId}/pause'],
  ['POST', '/agent/schedules/{scheduleId}/resume'],
  ['GET', '/agent/environments'],
  ['GET', '/agent/models'],
  ['GET', '/agent/artifacts/{artifactUid}'],
  ['GET', '/agent/artifacts/{artifactUid}/download'],
  ['POST', '/agent/identities'],
  ['GET', '/agent/identities'],
  ['GET', '/agent/identities/{uid}'],
  ['PUT', '/agent/identities/{uid}'],
  ['DELETE', '/agent/identities/{uid}'],
];

let hangar: TestServer;
before(async () => (hangar = await startTestServer()));
after(() => hangar?.stop());

describe('problem+json errors', () => {
  test('an error carries every member, the request path as instance and the trace id as x-request-id', async () => {
    const reply = await hangar.request('GET', '/api/v1/agent/runs/no-such-run?verbose=1');
    const problem = assertProblem(reply, 404, 'resource_not_found', '/api/v1/agent/runs/no-such-run');
    assert.equal(problem.title, 'Resource not found');
    assert.equal(problem.retryable, false);
    assert.match(problem.detail, /no-such-run/);

    const again = await hangar.request('GET', '/api/v1/agent/runs/no-such-run');
    assert.notEqual(
      assertProblem(again, 404, 'resource_not_found').trace_id,
      problem.trace_id,
      'each request has its own trace id',
    );
  });

  test('a successful reply also carries x-request-id', async () => {
    const reply = await hangar.request('GET', '/api/v1/agent/runs');
    assert.equal(reply.status, 200);
    assert.match(reply.headers.get('x-request-id') ?? '', /\S/);
  });

  test('an unknown route is a 404 problem, inside and outside /api/v1', async () => {
    assertProblem(await hangar.request('GET', '/no/such/route'), 404, 'resource_not_found', '/no/such/route');
    assertProblem(
      await hangar.request('GET', '/api/v1/agent/nothing-here'),
      404,
      'resource_not_found',
      '/api/v1/agent/nothing-here',
    );
    assertProblem(
      await hangar.request('GET', '/api/v1/agent/nothing-here', { apiKey: null }),
      404,
      'resource_not_found',
    );
    assertProblem(await hangar.request('DELETE', '/api/v1/agent/runs'), 404, 'resource_not_found');
  });

  test('invalid JSON, an empty JSON body and a non-JSON content type are 4xx invalid_request', async () => {
    const invalid = await hangar.request('POST', '/api/v1/agent/runs', {
      body: '{"prompt": "unterminated',
      headers: { 'content-type': 'application/json' },
    });
    assert.match(assertProblem(invalid, 400, 'invalid_request').detail, /not valid JSON/);
    const empty = await hangar.request('POST', '/api/v1/agent/runs', {
      headers: { 'content-type': 'application/json' },
    });
    assertProblem(empty, 400, 'invalid_request');
    // text/plain is read as a string, which is not the object the schema wants.
    const text = await hangar.request('POST', '/api/v1/agent/runs', {
      body: 'prompt=hi',
      headers: { 'content-type': 'text/plain' },
    });
    assert.match(assertProblem(text, 400, 'invalid_request').detail, /body/);
    const xml = await hangar.request('POST', '/api/v1/agent/runs', {
      body: '<prompt/>',
      headers: { 'content-type': 'application/xml' },
    });
    assert.match(assertProblem(xml, 415, 'invalid_request').detail, /application\/json/);
  });

  test('a schema violation is 400 invalid_request naming the field', async () => {
    const idle = await hangar.request('POST', '/api/v1/agent/runs', {
      body: { prompt: 'hi', config: { idle_timeout_minutes: 0 } },
    });
    assert.match(assertProblem(idle, 400, 'invalid_request').detail, /config\.idle_timeout_minutes/);
    const harness = await hangar.request('POST', '/api/v1/agent/runs', {
      body: { prompt: 'hi', config: { harness: { type: 'vim' } } },
    });
    assert.match(assertProblem(harness, 400, 'invalid_request').detail, /config\.harness\.type/);
    const prompt = await hangar.request('POST', '/api/v1/agent/runs', { body: { prompt: 42 } });
    assert.match(assertProblem(prompt, 400, 'invalid_request').detail, /prompt/);
    const missing = await hangar.request('POST', '/api/v1/agent/runs', { body: {} });
    assert.match(assertProblem(missing, 400, 'invalid_request').detail, /prompt/);

    for (const limit of ['0', '501', '-1', 'ten']) {
      const reply = await hangar.request('GET', `/api/v1/agent/runs?limit=${limit}`);
      assert.match(assertProblem(reply, 400, 'invalid_request').detail, /limit/, `limit=${limit}`);
    }
    const state = await hangar.request('GET', '/api/v1/agent/runs?state=QUEUED&state=SLEEPING');
    assert.match(assertProblem(state, 400, 'invalid_request').detail, /state/);
    const date = await hangar.request('GET', '/api/v1/agent/runs?created_after=yesterday');
    assert.match(assertProblem(date, 400, 'invalid_request').detail, /created_after/);
    // The boundaries themselves are accepted.
    assert.equal((await hangar.request('GET', '/api/v1/agent/runs?limit=1')).status, 200);
    assert.equal((await hangar.request('GET', '/api/v1/agent/runs?limit=500')).status, 200);
  });

  test('values PostgreSQL cannot hold are 400 invalid_request, not 500', async () => {
    const bodies = [
      { prompt: 'nul \u0000 in the prompt' },
      { prompt: 'ok', title: '\u0000' },
      { prompt: 'ok', config: { model_id: 'a\u0000b' } },
      { prompt: 'ok', skill: 'repo:name\ud800' },
      { prompt: 'ok', config: { skills: ['\udfff'] } },
      { prompt: 'ok', attachments: [{ file_name: 'a\u0000b', mime_type: 'text/plain', data: 'aGk=' }] },
    ];
    for (const body of bodies) {
      const reply = await hangar.request('POST', '/api/v1/agent/runs', { body });
      assertProblem(reply, 400, 'invalid_request', '/api/v1/agent/runs');
    }
    const queries = [
      'created_after=0000-01-01T00:00:00Z',
      'created_before=2024-01-01T00:00:00%2B23:59',
      'updated_after=2024-01-01T00:00:00-23:59',
      'name=%00',
      'skill_spec=a%00b',
    ];
    for (const query of queries) {
      assertProblem(
        await hangar.request('GET', `/api/v1/agent/runs?${query}`),
        400,
        'invalid_request',
        '/api/v1/agent/runs',
      );
    }
    assertProblem(await hangar.request('GET', '/api/v1/agent/runs/%00'), 400, 'invalid_request');
    assertProblem(await hangar.request('POST', '/api/v1/agent/runs/a%00/cancel'), 400, 'invalid_request');
    // Nothing half-stored: the list still answers and holds none of the refused runs.
    const list = await hangar.request('GET', '/api/v1/agent/runs?limit=500');
    assert.equal(list.status, 200);
    assert.ok(!list.body.runs.some((run: { prompt: string }) => run.prompt.includes('nul')));
  });

  test('a malformed path is a problem+json 4xx too', async () => {
    assertProblem(await hangar.request('GET', '/api/v1/agent/runs/%'), 400, 'invalid_request', '/api/v1/agent/runs/%');
    assertProblem(await hangar.request('GET', '/api/v1/agent/runs/%E0%A4%A'), 400, 'invalid_request');
    assertProblem(await hangar.request('GET', `/api/v1/agent/runs/${'x'.repeat(300)}`), 414, 'invalid_request');
  });

  test('every interface operation is either built and documented, or answers 422 operation_not_supported', async (t) => {
    const doc = (await hangar.request('GET', '/api/v1/openapi.json', { apiKey: null })).body;
    const missingUuid = '00000000-0000-4000-8000-000000000000';
    const notBuilt: string[] = [];
    for (const [method, template] of INTERFACE_OPERATIONS) {
      const path = `/api/v1${template.replace(/\{[^}]+\}/g, (name) => (name === '{artifactUid}' ? missingUuid : 'no-such-id'))}`;
      const reply = await hangar.request(method, path, method === 'POST' || method === 'PUT' ? { body: {} } : {});
      const what = `${method} ${template} answered ${reply.status} ${JSON.stringify(reply.body)}`;
      assert.ok(reply.status < 500, what);
      if (doc.paths[template]?.[method.toLowerCase()]) {
        assert.ok(
          !(reply.status === 404 && /^no route/.test(reply.body?.detail ?? '')),
          `${what}: documented but not routed`,
        );
      } else {
        const problem = assertProblem(reply, 422, 'operation_not_supported', path);
        assert.equal(problem.retryable, false);
        assert.match(problem.detail, /not available/);
        notBuilt.push(`${method} ${template}`);
        // Still behind the API key.
        assertProblem(await hangar.request(method, path, { apiKey: null }), 401, 'authentication_required');
      }
    }
    t.diagnostic(`not built yet: ${notBuilt.join(', ') || 'none'}`);
  });
});

describe('request body limit', () => {
  let small: TestServer;
  before(async () => (small = await startTestServer({ HANGAR_BODY_LIMIT_BYTES: '2048' })));
  after(() => small?.stop());

  test('a body over HANGAR_BODY_LIMIT_BYTES is 413; one under it is accepted', async () => {
    const over = await small.request('POST', '/api/v1/agent/runs', { body: { prompt: 'x'.repeat(4096) } });
    assertProblem(over, 413, 'invalid_request', '/api/v1/agent/runs');
    const under = await small.request('POST', '/api/v1/agent/runs', { body: { prompt: 'x'.repeat(1500) } });
    assert.equal(under.status, 200);
    // The default limit is far above 2 KiB.
    assert.equal(
      (await hangar.request('POST', '/api/v1/agent/runs', { body: { prompt: 'x'.repeat(4096) } })).status,
      200,
    );
  });
});

describe('documentation and health', () => {
  test('/api/v1/openapi.json is a public OpenAPI 3.1 document of the runs API', async () => {
    const reply = await hangar.request('GET', '/api/v1/openapi.json', { apiKey: null });
    assert.equal(reply.status, 200);
    const doc = reply.body;
    assert.equal(doc.openapi, '3.1.0');
    assert.equal(typeof doc.info.title, 'string');
    assert.match(doc.servers[0].url, /\/api\/v1$/);
    for (const path of [
      '/agent/runs',
      '/agent/runs/{runId}',
      '/agent/runs/{runId}/cancel',
      '/agent/runs/{runId}/timeline',
      '/agent/run',
    ]) {
      assert.ok(doc.paths[path], `${path} is missing from ${Object.keys(doc.paths).join(', ')}`);
    }
    assert.ok(doc.paths['/agent/runs'].post.requestBody, 'POST /agent/runs documents its body');
    assert.ok(
      doc.paths['/agent/runs'].get.parameters.some((parameter: { name: string }) => parameter.name === 'limit'),
    );
    assert.equal(doc.paths['/agent/run'].post.deprecated, true);
    // Hidden: health probes and error pages.
    assert.equal(doc.paths['/healthz'], undefined);
    assert.equal(doc.paths['/errors/{code}'], undefined);
  });

  test('/docs serves an HTML page', async () => {
    const response = await fetch(`${hangar.url}/docs`);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/html/);
    assert.match(await response.text(), /<html/i);
  });

  test('/healthz and /readyz answer 200 without an API key', async () => {
    const health = await hangar.request('GET', '/healthz', { apiKey: null });
    assert.equal(health.status, 200);
    assert.deepEqual(health.body, { status: 'ok' });
    const ready = await hangar.request('GET', '/readyz', { apiKey: null });
    assert.equal(ready.status, 200);
    assert.deepEqual(ready.body, { status: 'ready' });
  });

  test('/errors/<code> describes an error code; an unknown code is 404', async () => {
    const known = await hangar.request('GET', '/errors/invalid_request', { apiKey: null });
    assert.equal(known.status, 200);
    assert.equal(known.body.error_code, 'invalid_request');
    assert.equal(known.body.title, 'Invalid request');
    // The type URI of a problem points at this page.
    const problem = assertProblem(await hangar.request('GET', '/api/v1/agent/runs?limit=0'), 400, 'invalid_request');
    assert.equal(new URL(problem.type).pathname, '/errors/invalid_request');
    assertProblem(await hangar.request('GET', '/errors/no_such_code', { apiKey: null }), 404, 'resource_not_found');
  });
});

describe('authentication and team selection', () => {
  test('a missing, unknown, malformed or revoked API key is 401 authentication_required', async () => {
    const path = '/api/v1/agent/runs';
    assertProblem(await hangar.request('GET', path, { apiKey: null }), 401, 'authentication_required', path);
    assertProblem(await hangar.request('GET', path, { apiKey: generateApiKey() }), 401, 'authentication_required');
    for (const authorization of [
      'Basic dXNlcjpwYXNz',
      'Bearer',
      'Bearer ',
      `Bearer ${hangar.apiKey} extra`,
      hangar.apiKey,
      'Bearer \u00e9t\u00e9-key',
      'Token abc.def',
    ]) {
      const reply = await hangar.request('GET', path, { apiKey: null, headers: { authorization } });
      assertProblem(reply, 401, 'authentication_required');
    }
    // Also on writes: nothing is created.
    assertProblem(
      await hangar.request('POST', path, { apiKey: null, body: { prompt: 'anonymous' } }),
      401,
      'authentication_required',
    );

    const { apiKey } = await hangar.addUser(hangar.teamUid, 'member');
    assert.equal((await hangar.request('GET', path, { apiKey })).status, 200);
    await hangar.db
      .updateTable('api_keys')
      .set({ revoked_at: new Date() })
      .where('key_hash', '=', hashApiKey(apiKey))
      .execute();
    assertProblem(await hangar.request('GET', path, { apiKey }), 401, 'authentication_required');
    // The scheme name is case-insensitive.
    assert.equal(
      (await hangar.request('GET', path, { apiKey: null, headers: { authorization: `bearer ${hangar.apiKey}` } }))
        .status,
      200,
    );
  });

  test('naming a team the caller is not in is 403 not_authorized, by X-Team-Uid or its alias X-Warp-Team-Uid', async () => {
    const other = await hangar.createTeamWithUser();
    for (const header of ['x-team-uid', 'x-warp-team-uid']) {
      for (const team of [other.teamUid, 'NoSuchTeamUid000000000']) {
        const reply = await hangar.request('GET', '/api/v1/agent/runs', { headers: { [header]: team } });
        assertProblem(reply, 403, 'not_authorized');
        const create = await hangar.request('POST', '/api/v1/agent/runs', {
          body: { prompt: 'sneaky' },
          headers: { [header]: team },
        });
        assertProblem(create, 403, 'not_authorized');
      }
      const own = await hangar.request('GET', '/api/v1/agent/runs', { headers: { [header]: hangar.teamUid } });
      assert.equal(own.status, 200);
    }
    const theirs = await hangar.request('GET', '/api/v1/agent/runs', { apiKey: other.apiKey });
    assert.equal(theirs.status, 200);
    assert.ok(theirs.body.runs.every((run: { prompt: string }) => run.prompt !== 'sneaky'));
  });

  test('a user in two teams must name one: 400 without the header, each team separate with it', async () => {
    const second = await hangar.createTeamWithUser();
    await insertMembership(hangar.db, hangar.teamUid, second.userUid, 'member');
    const withoutHeader = await hangar.request('GET', '/api/v1/agent/runs', { apiKey: second.apiKey });
    assert.match(assertProblem(withoutHeader, 400, 'invalid_request').detail, /X-Team-Uid/);
    assertProblem(
      await hangar.request('POST', '/api/v1/agent/runs', { apiKey: second.apiKey, body: { prompt: 'which team?' } }),
      400,
      'invalid_request',
    );

    const inOwn = await hangar.request('POST', '/api/v1/agent/runs', {
      apiKey: second.apiKey,
      body: { prompt: 'for the second team' },
      headers: { 'x-team-uid': second.teamUid },
    });
    assert.equal(inOwn.status, 200);
    const inDefault = await hangar.request('POST', '/api/v1/agent/runs', {
      apiKey: second.apiKey,
      body: { prompt: 'for the default team' },
      headers: { 'x-warp-team-uid': hangar.teamUid },
    });
    assert.equal(inDefault.status, 200);

    const listOf = async (team: string) => {
      const reply = await hangar.request('GET', '/api/v1/agent/runs?limit=500', {
        apiKey: second.apiKey,
        headers: { 'x-team-uid': team },
      });
      assert.equal(reply.status, 200);
      return reply.body.runs.map((run: { run_id: string }) => run.run_id) as string[];
    };
    const secondTeamRuns = await listOf(second.teamUid);
    const defaultTeamRuns = await listOf(hangar.teamUid);
    assert.deepEqual(secondTeamRuns, [inOwn.body.run_id]);
    assert.ok(defaultTeamRuns.includes(inDefault.body.run_id));
    assert.ok(!defaultTeamRuns.includes(inOwn.body.run_id));
    // The default team's own admin sees the run made for that team, not the other team's.
    assertProblem(await hangar.request('GET', `/api/v1/agent/runs/${inOwn.body.run_id}`), 404, 'resource_not_found');
    assert.equal((await hangar.request('GET', `/api/v1/agent/runs/${inDefault.body.run_id}`)).status, 200);
  });
});

describe('logs', () => {
  test('request logs never contain the API key', async (t) => {
    const database = await createTestDatabase();
    t.after(() => database.drop());
    const server = await spawnKeyedServer(database, { HANGAR_LOG_LEVEL: 'info' });
    const { apiKey } = server;
    const wrongKey = generateApiKey();
    t.after(() => stopChild(server.child, 'SIGKILL'));
    const call = async (method: string, path: string, headers: Record<string, string>, body?: unknown) => {
      const response = await fetch(`${server.url}${path}`, {
        method,
        headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      });
      await response.arrayBuffer();
      return response.status;
    };
    const auth = { authorization: `Bearer ${apiKey}` };
    assert.equal(await call('POST', '/api/v1/agent/runs', auth, { prompt: 'logged request' }), 200);
    assert.equal(await call('GET', '/api/v1/agent/runs?limit=5', auth), 200);
    assert.equal(await call('GET', '/api/v1/agent/runs/missing', auth), 404);
    assert.equal(await call('POST', '/api/v1/agent/runs', auth, '{broken'), 400);
    assert.equal(await call('GET', '/api/v1/agent/runs', { ...auth, 'x-team-uid': 'NotMyTeam' }), 403);
    assert.equal(await call('GET', '/api/v1/agent/no-such-route', auth), 404);
    assert.equal(await call('GET', '/api/v1/agent/runs', { authorization: `Bearer ${wrongKey}` }), 401);
    assert.equal(await call('GET', '/api/v1/agent/runs', { authorization: `Basic ${apiKey}` }), 401);
    assert.equal(await call('GET', '/api/v1/agent/runs', { 'x-api-key': apiKey }), 401);
    // A real start knows its port: problem type URIs point at this server's /errors pages.
    const problem = (await (await fetch(`${server.url}/api/v1/agent/runs/missing`, { headers: auth })).json()) as {
      type: string;
    };
    assert.equal(problem.type, `${server.url}/errors/resource_not_found`);
    assert.equal((await fetch(problem.type)).status, 200);
    // Stop gracefully so everything logged is flushed before reading it.
    assert.deepEqual(await stopChild(server.child, 'SIGTERM'), { code: 0, signal: null });

    const output = server.output();
    assert.match(output, /\/api\/v1\/agent\/runs\/missing/, 'request logging was not on: the test would prove nothing');
    assert.match(output, /"statusCode":401/);
    for (const secret of [apiKey, wrongKey, apiKey.slice(4), wrongKey.slice(4)]) {
      assert.equal(output.includes(secret), false, 'an API key appears in the logs');
    }
  });
});
