/**
 * Random and hostile input against every route the server has: whatever arrives, the answer is a clear 4xx (with
 * a problem+json body) or a success, never a 5xx. The runs API gets deeper, shaped input; every other route
 * (those of the OpenAPI document and the hidden ones: webhook ingress, downloads, harness-support proxies, the
 * worker websocket, the dashboard) gets repeated and bracketed query keys, arrays where scalars belong, huge
 * values, odd path parameters and bodies in the wrong content type; and what Node's HTTP parser refuses before
 * Fastify sees it is a problem+json too. Bounded: about 2,000 requests. A failure
 * prints fast-check's seed and the shrunk counterexample; replay it with HANGAR_FUZZ_SEED=<seed>.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import { rawRequest } from '../support/raw-http.js';
import { fastifyPattern, type ServedRoute, servedRoutes } from '../support/routes.js';
import { startTestServer, type TestServer } from '../support/server.js';

const seed = process.env.HANGAR_FUZZ_SEED ? Number(process.env.HANGAR_FUZZ_SEED) : undefined;
const settings = (numRuns: number) => ({ numRuns, ...(seed === undefined ? {} : { seed }) });

let hangar: TestServer;
/** Ids of real runs, so random input also reaches code paths that find something. */
const runIds: string[] = [];
/** A genuine cursor of the default ordering, to be mutated. */
let realCursor = '';

/** Real values for path parameters by name, so hostile requests also reach resources that exist. */
const realParams: Record<string, string[]> = {};

before(async () => {
  // Requests with no key or a wrong one are part of the input: the failed-authentication throttle must not turn
  // every later request into a 429.
  hangar = await startTestServer({
    HANGAR_AUTH_FAILURES_PER_MINUTE: '1000000',
    HANGAR_WEBHOOK_AUTH_FAILURES_PER_MINUTE: '1000000',
  });
  for (let i = 0; i < 3; i++) {
    const created = await hangar.request('POST', '/api/v1/agent/runs', {
      body: { prompt: `fuzz seed run ${i}`, metadata: { team: 'fuzz', n: String(i) }, config: { name: 'fuzzer' } },
    });
    assert.equal(created.status, 200);
    runIds.push(created.body.run_id);
  }
  const page = await hangar.request('GET', '/api/v1/agent/runs?limit=1');
  realCursor = page.body.page_info.next_cursor;
  assert.equal(typeof realCursor, 'string');
  const hook = await hangar.request('POST', '/api/v1/factory/webhooks', {
    body: { name: 'fuzzed', auth_mode: 'url_token' },
  });
  assert.equal(hook.status, 201);
  realParams.runId = runIds;
  realParams.uid = [hook.body.uid];
  realParams.token = [hook.body.secret];
});
after(async () => {
  // A connection the server failed to close (what a test below looks for) must fail that test, not hold up the
  // server's shutdown for good.
  for (const socket of openConnections) socket.resetAndDestroy();
  await hangar?.stop();
});

/** Sends a request and checks the invariants every answer must keep; returns the status. */
async function send(
  method: string,
  pathAndQuery: string,
  body?: { raw: string; contentType?: string },
): Promise<number> {
  const response = await fetch(`${hangar.url}${pathAndQuery}`, {
    method,
    headers: {
      authorization: `Bearer ${hangar.apiKey}`,
      ...(body ? { 'content-type': body.contentType ?? 'application/json' } : {}),
    },
    body: body?.raw,
  });
  const text = await response.text();
  const what = `${method} ${pathAndQuery}${body ? ` body ${JSON.stringify(body.raw.slice(0, 300))}` : ''} -> ${response.status} ${text.slice(0, 500)}`;
  assert.ok(response.status < 500, what);
  if (response.status >= 400) {
    assert.match(response.headers.get('content-type') ?? '', /^application\/problem\+json/, what);
    const problem = JSON.parse(text) as { status: number; error_code: string };
    assert.equal(problem.status, response.status, what);
    assert.equal(typeof problem.error_code, 'string', what);
  }
  return response.status;
}

/** Percent-encodes the UTF-8 bytes of any string (lone surrogates become U+FFFD, as fetch would send them). */
function percentEncode(value: string): string {
  return [...Buffer.from(value, 'utf8')]
    .map((byte) =>
      /[A-Za-z0-9_.~-]/.test(String.fromCharCode(byte))
        ? String.fromCharCode(byte)
        : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`,
    )
    .join('');
}

/** Strings that tend to break things: control characters, NUL, lone surrogates, SQL and path syntax, long runs. */
const nastyString = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary' }),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.constantFrom(
    '',
    ' ',
    '\u0000',
    'a\u0000b',
    '\ud800',
    '\udfff\ud800',
    '\uffff',
    '💥🚀',
    '%00',
    '%',
    '../../etc/passwd',
    "' OR 1=1 --",
    '\\',
    '"',
    '\\u0000',
    '${jndi:x}',
    '__proto__',
    'constructor',
    'x'.repeat(5000),
    '\n\r\t',
  ),
);

const jsonish: fc.Arbitrary<unknown> = fc.oneof(
  nastyString,
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.jsonValue({ maxDepth: 3 }),
  fc.array(nastyString, { maxLength: 6 }),
  fc.dictionary(nastyString, nastyString, { maxKeys: 4 }),
);

const configArb = fc.record(
  {
    name: fc.oneof(nastyString, jsonish),
    model_id: nastyString,
    base_prompt: nastyString,
    environment_id: fc.oneof(nastyString, fc.constant('AAAAAAAAAAAAAAAAAAAAAA'), fc.constant('empty-environment')),
    skill_spec: fc.oneof(nastyString, fc.constantFrom('owner/repo:path/SKILL.md', 'repo:name', 'a:\u0000')),
    skills: fc.oneof(fc.array(nastyString, { maxLength: 4 }), jsonish),
    mcp_servers: fc.oneof(
      fc.dictionary(
        nastyString,
        fc.dictionary(fc.constantFrom('command', 'url', 'warp_id', 'args', 'env', 'headers'), jsonish, { maxKeys: 3 }),
        { maxKeys: 3 },
      ),
      jsonish,
    ),
    worker_host: fc.oneof(nastyString, fc.constantFrom('warp', '')),
    harness: fc.oneof(
      fc.record(
        { type: fc.oneof(fc.constantFrom('oz', 'claude', 'codex', 'gemini'), nastyString), model_id: nastyString },
        { requiredKeys: [] },
      ),
      jsonish,
    ),
    idle_timeout_minutes: fc.oneof(fc.integer({ min: -100, max: 100 }), fc.double(), jsonish),
    computer_use_enabled: jsonish,
    harness_auth_secrets: jsonish,
    unknown_member: jsonish,
  },
  { requiredKeys: [] },
);

const attachmentArb = fc.record(
  {
    file_name: nastyString,
    mime_type: fc.oneof(nastyString, fc.constant('image/png')),
    data: fc.oneof(nastyString, fc.base64String({ maxLength: 64 })),
  },
  { requiredKeys: [] },
);

/** Bodies shaped like a run creation request, so many get past the schema and reach the service and database. */
const createBodyArb = fc.record(
  {
    prompt: fc.oneof(nastyString, nastyString, jsonish),
    title: fc.oneof(nastyString, jsonish),
    config: fc.oneof(configArb, configArb, jsonish),
    skill: fc.oneof(nastyString, fc.constantFrom('owner/repo:skills/x/SKILL.md', 'repo:name')),
    mode: fc.oneof(fc.constantFrom('normal', 'plan', 'orchestrate'), nastyString),
    team: jsonish,
    agent_identity_uid: nastyString,
    conversation_id: nastyString,
    parent_run_id: fc.oneof(nastyString, fc.constant('__REAL_RUN__')),
    metadata: fc.oneof(fc.dictionary(nastyString, nastyString, { maxKeys: 25 }), jsonish),
    attachments: fc.oneof(fc.array(attachmentArb, { maxLength: 7 }), jsonish),
    images: fc.oneof(fc.array(attachmentArb, { maxLength: 3 }), jsonish),
    interactive: jsonish,
  },
  { requiredKeys: [] },
);

/**
 * A valid request with one to three members replaced by values of the right JSON type but hostile content
 * (NUL, lone surrogates, odd keys): these pass the schema and reach the service and the database.
 */
const wellTypedBodyArb = fc
  .record(
    {
      prompt: nastyString,
      title: nastyString,
      skill: fc.oneof(nastyString, fc.constantFrom('owner/repo:skills/x/SKILL.md', 'repo:\u0000', 'repo:name\ud800')),
      mode: fc.constantFrom('normal', 'plan', 'orchestrate'),
      team: fc.boolean(),
      agent_identity_uid: nastyString,
      conversation_id: nastyString,
      parent_run_id: fc.oneof(nastyString, fc.constant('__REAL_RUN__')),
      metadata: fc.dictionary(nastyString, nastyString, { maxKeys: 3 }),
      interactive: fc.boolean(),
      config: fc.record(
        {
          name: nastyString,
          model_id: nastyString,
          base_prompt: nastyString,
          environment_id: fc.oneof(nastyString, fc.constant('AAAAAAAAAAAAAAAAAAAAAA')),
          skills: fc.array(nastyString, { maxLength: 3 }),
          worker_host: nastyString,
          idle_timeout_minutes: fc.integer({ min: 1, max: 60 }),
          mcp_servers: fc.dictionary(
            nastyString,
            fc.oneof(
              fc.record({
                command: nastyString,
                args: fc.array(nastyString, { maxLength: 2 }),
                env: fc.dictionary(nastyString, nastyString, { maxKeys: 2 }),
              }),
              fc.record({
                url: fc.oneof(nastyString, fc.webUrl()),
                headers: fc.dictionary(nastyString, nastyString, { maxKeys: 2 }),
              }),
            ),
            { maxKeys: 2 },
          ),
          harness: fc.record({
            type: fc.constantFrom('oz', 'claude', 'codex', 'gemini'),
            model_id: nastyString,
            reasoning_level: nastyString,
          }),
          unknown_member: jsonish,
        },
        { requiredKeys: [] },
      ),
      attachments: fc.array(
        fc.record({
          file_name: nastyString,
          mime_type: fc.constant('image/png'),
          data: fc.base64String({ maxLength: 40 }),
        }),
        { maxLength: 2 },
      ),
    },
    { requiredKeys: [] },
  )
  .chain((hostile) => {
    const keys = Object.keys(hostile);
    return fc.subarray(keys, { minLength: Math.min(1, keys.length), maxLength: 3 }).map((chosen) => ({
      prompt: 'a valid prompt',
      ...Object.fromEntries(chosen.map((key) => [key, hostile[key as keyof typeof hostile]])),
    }));
  });

function withRealIds(raw: string): string {
  return raw.replaceAll('__REAL_RUN__', runIds[0]!);
}

test('POST /agent/runs never answers 5xx, whatever the body', async () => {
  const bodyArb = fc.oneof(
    { weight: 5, arbitrary: wellTypedBodyArb.map((body) => ({ raw: withRealIds(JSON.stringify(body)) })) },
    { weight: 3, arbitrary: createBodyArb.map((body) => ({ raw: withRealIds(JSON.stringify(body)) })) },
    { weight: 2, arbitrary: fc.jsonValue().map((value) => ({ raw: JSON.stringify(value) })) },
    { weight: 1, arbitrary: nastyString.map((raw) => ({ raw })) },
    {
      weight: 1,
      arbitrary: fc.record({
        raw: nastyString,
        contentType: fc.constantFrom(
          'text/plain',
          'application/xml',
          'application/json; charset=latin1',
          'multipart/form-data',
        ),
      }),
    },
  );
  let created = 0;
  await fc.assert(
    fc.asyncProperty(bodyArb, fc.constantFrom('/api/v1/agent/runs', '/api/v1/agent/run'), async (body, path) => {
      if ((await send('POST', path, body)) === 200) created++;
    }),
    settings(120),
  );
  // The generator is meant to reach the database, not only the schema check.
  assert.ok(created > 0, 'no random body was accepted: the fuzzing never got past validation');
});

const isoDate = fc
  .date({ min: new Date(-62_000_000_000_000), max: new Date(250_000_000_000_000), noInvalidDate: true })
  .map((date) => date.toISOString());
const dateArb = fc.oneof(
  isoDate,
  nastyString,
  fc.constantFrom(
    '0000-01-01T00:00:00Z',
    '9999-12-31T23:59:59Z',
    '2024-06-30T23:59:60Z',
    '2024-02-30T00:00:00Z',
    '2024-01-01T00:00:00+23:59',
    '2024-01-01T00:00:00-23:59',
    '2024-01-01T00:00:00.123456789012Z',
    '2024-01-01t00:00:00z',
    '2024-01-01 00:00:00Z',
    '+275760-09-13T00:00:00Z',
    '-000001-01-01T00:00:00Z',
    'infinity',
    'epoch',
    'now',
  ),
);

const cursorArb = fc.oneof(
  nastyString,
  fc.base64String({ maxLength: 80 }),
  fc.constant('__REAL_CURSOR__'),
  fc
    .tuple(fc.nat({ max: 200 }), fc.string({ unit: 'binary-ascii', minLength: 1, maxLength: 3 }))
    .map(([at, insert]) => `__CURSOR_EDIT__${at}:${insert}`),
  fc
    .tuple(fc.jsonValue(), fc.base64String({ maxLength: 24 }))
    .map(([payload, mac]) => `${Buffer.from(JSON.stringify(payload)).toString('base64url')}.${mac}`),
);

const limitArb = fc.oneof(
  fc.integer({ min: -1000, max: 1000 }),
  fc.bigInt().map(String),
  fc.double().map(String),
  fc.constantFrom('1e3', '0x10', '', ' 5', '5 ', '+5', '00000000000000000000007', '9'.repeat(400), 'NaN', 'Infinity'),
);

const listParamArb = fc.oneof(
  fc.tuple(fc.constant('limit'), limitArb.map(String)),
  fc.tuple(fc.constant('cursor'), cursorArb),
  fc.tuple(
    fc.constantFrom('sort_by', 'sort_order'),
    fc.oneof(fc.constantFrom('updated_at', 'created_at', 'title', 'agent', 'asc', 'desc'), nastyString),
  ),
  fc.tuple(fc.constant('state'), fc.oneof(fc.constantFrom('QUEUED', 'CANCELLED', 'SUCCEEDED'), nastyString)),
  fc.tuple(fc.constantFrom('created_after', 'created_before', 'updated_after'), dateArb),
  fc.tuple(
    fc.constantFrom(
      'name',
      'model_id',
      'creator',
      'executor',
      'source',
      'execution_location',
      'environment_id',
      'skill',
      'skill_spec',
      'schedule_id',
      'ancestor_run_id',
      'artifact_type',
      'q',
    ),
    fc.oneof(nastyString, fc.constantFrom('empty-environment', 'API', 'REMOTE', 'PLAN', '__REAL_RUN__')),
  ),
  fc.tuple(
    fc.oneof(
      nastyString.map((key) => `metadata[${key}]`),
      fc.constantFrom(
        'metadata[]',
        'metadata[a][b]',
        'metadata',
        'metadata[',
        'metadata]',
        'metadata[team]',
        'metadata[__proto__]',
        'metadata[constructor]',
      ),
    ),
    fc.oneof(nastyString, fc.constant('fuzz')),
  ),
  fc.tuple(nastyString, nastyString),
);

function listQuery(params: Array<[string, string]>, realCursorValue: string): string {
  return params
    .map(([name, value]) => {
      let resolved = value.replaceAll('__REAL_RUN__', runIds[0]!);
      if (resolved === '__REAL_CURSOR__') resolved = realCursorValue;
      const edit = /^__CURSOR_EDIT__(\d+):(.*)$/s.exec(resolved);
      if (edit) {
        const at = Number(edit[1]) % (realCursorValue.length + 1);
        resolved = realCursorValue.slice(0, at) + edit[2] + realCursorValue.slice(at + 1);
      }
      return `${percentEncode(name)}=${percentEncode(resolved)}`;
    })
    .join('&');
}

test('GET /agent/runs never answers 5xx, whatever the query string', async () => {
  let listed = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.array(listParamArb, { minLength: 1, maxLength: 6 }),
      fc.option(
        nastyString.map((raw) => raw.replaceAll('#', '')),
        { nil: undefined },
      ),
      async (params, rawSuffix) => {
        // Mostly well-encoded pairs; sometimes a raw, unencoded tail straight from the generator.
        const query = listQuery(params, realCursor) + (rawSuffix === undefined ? '' : `&${rawSuffix}`);
        if ((await send('GET', `/api/v1/agent/runs?${query}`)) === 200) listed++;
      },
    ),
    settings(100),
  );
  assert.ok(listed > 0, 'no random query was accepted: the fuzzing never got past validation');
});

const pathIdArb = fc.oneof(
  nastyString.map(percentEncode),
  nastyString.filter((raw) => !/[#?]/.test(raw)),
  fc.uuid(),
  fc.constantFrom(
    '%00',
    '%zz',
    '%',
    '..',
    '.',
    '%2e%2e',
    '%2F',
    'a%2Fb',
    '__REAL_RUN__',
    '%E0%A4%A',
    '%C0%AF',
    '%ED%A0%80',
  ),
);

test('GET /agent/runs/{id}, its timeline and POST .../cancel never answer 5xx, whatever the id', async () => {
  await fc.assert(
    fc.asyncProperty(pathIdArb, fc.constantFrom('get', 'timeline', 'cancel'), async (rawId, operation) => {
      const id = rawId.replaceAll('__REAL_RUN__', runIds[1]!);
      if (id === '') return;
      if (operation === 'get') await send('GET', `/api/v1/agent/runs/${id}`);
      else if (operation === 'timeline') await send('GET', `/api/v1/agent/runs/${id}/timeline`);
      else await send('POST', `/api/v1/agent/runs/${id}/cancel`);
    }),
    settings(80),
  );
  // The random ids reached real runs too: the cancelled one is cancelled, and cancelling again is a clear 400.
  const real = await hangar.request('GET', `/api/v1/agent/runs/${runIds[1]}`);
  assert.equal(real.status, 200);
});

/**
 * Query parameter names worth sending to the routes the OpenAPI document does not describe: every name a hidden
 * route reads (the worker websocket's worker_id, a download link's expires, signature and runs, the model proxy's
 * key) and a list's cursor.
 */
const HIDDEN_ROUTE_QUERY_NAMES = ['worker_id', 'expires', 'signature', 'runs', 'key', 'cursor'];

/** The query names each route reads: those the OpenAPI document declares for it, or the hidden routes' list. */
function queryNamesByRoute(): (route: ServedRoute) => string[] {
  const document = hangar.server.app.swagger() as {
    paths: Record<string, Record<string, { parameters?: Array<{ in: string; name: string }> }>>;
  };
  const declared = new Map<string, string[]>();
  for (const [path, operations] of Object.entries(document.paths))
    for (const [method, operation] of Object.entries(operations))
      declared.set(
        `${method.toUpperCase()} /api/v1${fastifyPattern(path)}`,
        operation.parameters?.filter((p) => p.in === 'query').map((p) => p.name) ?? [],
      );
  return (route) =>
    declared.get(`${route.method === 'HEAD' ? 'GET' : route.method} ${route.url}`) ?? HIDDEN_ROUTE_QUERY_NAMES;
}

const hugeValue = fc.constantFrom('x'.repeat(6000), '9'.repeat(4000), '%00'.repeat(1500), '[]'.repeat(2000));
const queryValue = fc.oneof(
  { weight: 4, arbitrary: nastyString },
  { weight: 2, arbitrary: fc.oneof(fc.integer().map(String), fc.constantFrom('', 'true', '-1', '1e999', 'null')) },
  { weight: 1, arbitrary: hugeValue },
);
const BRACKETS = ['[]', '[0]', '[a]', '[a][b]', '%5B%5D', '%5B0%5D', '[', ']', '[]]'];

/**
 * A query string of the names a route reads, in the shapes a parser may turn into something else than a string:
 * a key given several times (an array), bracketed keys (`a[]`, `a[0]`, `a[b][c]`, raw or %-encoded), a key with
 * no `=`, an empty or random key. Values are hostile strings, numbers and huge runs.
 */
function queryArb(names: string[]): fc.Arbitrary<string> {
  const name = names.length > 0 ? fc.constantFrom(...names) : fc.constantFrom(...HIDDEN_ROUTE_QUERY_NAMES);
  const key = fc.oneof(
    { weight: 4, arbitrary: name.map(percentEncode) },
    {
      weight: 3,
      arbitrary: fc
        .tuple(name, fc.constantFrom(...BRACKETS))
        .map(([base, suffix]) => `${percentEncode(base)}${suffix}`),
    },
    { weight: 1, arbitrary: nastyString.map(percentEncode) },
  );
  const pair = fc.tuple(key, fc.array(queryValue, { minLength: 1, maxLength: 3 }), fc.boolean());
  return fc
    .array(pair, { minLength: 1, maxLength: 5 })
    .map((pairs) =>
      pairs
        .flatMap(([k, values, bare]) => (bare ? [k] : values.map((value) => `${k}=${percentEncode(value)}`)))
        .join('&'),
    );
}

const pathParamArb = (name: string) =>
  fc.oneof(
    { weight: 3, arbitrary: realParams[name] ? fc.constantFrom(...realParams[name]!) : fc.uuid() },
    { weight: 1, arbitrary: fc.uuid() },
    // At most 4,000 characters a parameter, so that a path of three stays under Node's head limit.
    {
      weight: 2,
      arbitrary: nastyString.map((value) => percentEncode(value).slice(0, 4000)).filter((value) => value !== ''),
    },
    { weight: 1, arbitrary: fc.constantFrom('%00', '%zz', '..', '%2e%2e', 'a%2Fb', '%C0%AF', 'x'.repeat(300)) },
  );

/** A path for a route pattern, with each `:param` and `*` filled in by `fill`. */
function fillPath(pattern: string, fill: (part: string) => fc.Arbitrary<string>): fc.Arbitrary<string> {
  const parts = pattern.split(/(:[A-Za-z_]+|\*)/);
  return fc
    .tuple(...parts.map((part) => (part === '*' || part.startsWith(':') ? fill(part) : fc.constant(part))))
    .map((filled) => filled.join(''));
}

const hostilePath = (pattern: string) =>
  fillPath(pattern, (part) =>
    part === '*'
      ? fc.oneof(fc.constantFrom('', 'v1/models', 'a/b/c'), nastyString.map(percentEncode))
      : pathParamArb(part.slice(1)),
  );

/** The route's path with real values where known, so the query reaches the handler. */
function plainPath(pattern: string): string {
  return pattern.replace(/:([A-Za-z_]+)|\*/g, (_match, name?: string) =>
    name ? (realParams[name]?.[0] ?? '00000000-0000-4000-8000-000000000000') : 'v1/models',
  );
}

const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=latin1',
  'application/json; charset=utf-16',
  'text/plain',
  'application/xml',
  'application/x-www-form-urlencoded',
  'multipart/form-data',
  'multipart/form-data; boundary=x',
  'application/octet-stream',
  'application/merge-patch+json',
  'garbage',
  ';;;',
  '',
];

const bodyArb = fc.oneof(
  { weight: 3, arbitrary: jsonish.map((value) => ({ body: JSON.stringify(value), type: 'application/json' })) },
  { weight: 3, arbitrary: fc.record({ body: nastyString, type: fc.constantFrom(...CONTENT_TYPES) }) },
  { weight: 1, arbitrary: fc.constantFrom(...CONTENT_TYPES).map((type) => ({ body: '', type })) },
  { weight: 1, arbitrary: fc.constant({ body: `[${'1,'.repeat(50_000)}1]`, type: 'application/json' }) },
  { weight: 1, arbitrary: fc.constant({ body: '{"a":'.repeat(5000), type: 'application/json' }) },
);

type Credential = 'right' | 'none' | 'member' | 'worker' | 'garbage' | 'twice';

interface HostileRequest {
  path: string;
  query?: string;
  body?: { body: string; type: string } | null;
  credential: Credential;
  upgrade: boolean;
  html: boolean;
}

const WORKER_WEBSOCKET = '/api/v1/selfhosted/worker/ws';

function hostileRequest(route: ServedRoute, queryNames: string[]): fc.Arbitrary<HostileRequest> {
  return fc.record({
    path: hostilePath(route.url),
    query: fc.option(queryArb(queryNames), { nil: undefined, freq: 4 }),
    body: route.method === 'GET' || route.method === 'HEAD' ? fc.constant(undefined) : fc.option(bodyArb),
    credential: fc.oneof(
      { weight: 6, arbitrary: fc.constant<Credential>('right') },
      { weight: 1, arbitrary: fc.constantFrom<Credential>('none', 'member', 'worker', 'garbage', 'twice') },
    ),
    upgrade: route.method === 'GET' ? fc.boolean() : fc.constant(false),
    html: fc.boolean(),
  });
}

/** The Authorization header: `right` is the key the route takes (a worker key on the worker websocket). */
function authorization(route: ServedRoute, credential: Credential): Record<string, string | string[]> {
  const kind = credential === 'right' ? (route.url === WORKER_WEBSOCKET ? 'worker' : 'member') : credential;
  if (kind === 'none') return {};
  if (kind === 'worker') return { authorization: `Bearer ${hangar.workerKey}` };
  if (kind === 'garbage') return { authorization: 'Bearer hk_not-a-key' };
  if (kind === 'twice') return { authorization: [`Bearer ${hangar.apiKey}`, 'Bearer x'] };
  return { authorization: `Bearer ${hangar.apiKey}` };
}

/** Sends one hostile request to a route and checks what every answer must keep. */
async function sendHostile(route: ServedRoute, request: HostileRequest): Promise<void> {
  // The whole request line under Node's 16 KiB head limit (a long path leaves less room for the query): what lies
  // beyond it is the parser's refusal, tested on its own below.
  const query = request.query?.slice(0, Math.max(0, 14_000 - request.path.length));
  const path = query === undefined ? request.path : `${request.path}?${query}`;
  const headers = authorization(route, request.credential);
  if (request.body) headers['content-type'] = request.body.type;
  if (request.html) headers.accept = 'text/html';
  if (request.upgrade)
    Object.assign(headers, {
      connection: 'Upgrade',
      upgrade: 'websocket',
      'sec-websocket-version': '13',
      'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
    });
  const answer = await rawRequest(hangar.url, { method: route.method, path, headers, body: request.body?.body });
  const what = `${route.method} ${path.slice(0, 300)} -> ${answer.status} ${answer.text.slice(0, 300)}`;
  assert.ok(answer.status >= 100 && answer.status < 500, what);
  // Only the worker websocket switches protocols; every other route refuses an upgrade in plain HTTP.
  if (answer.status === 101) assert.ok(request.upgrade && route.url === WORKER_WEBSOCKET, what);
  if (answer.status < 400 || route.method === 'HEAD') return;
  // A browser's navigation to an unknown page gets the dashboard's own HTML page, by design.
  if (request.html && String(answer.headers['content-type']).startsWith('text/html')) return;
  assert.match(String(answer.headers['content-type']), /^application\/problem\+json/, what);
  const problem = JSON.parse(answer.text) as { status: number; error_code: string };
  assert.equal(problem.status, answer.status, what);
  assert.equal(typeof problem.error_code, 'string', what);
}

test('every route the server has (documented or hidden) never answers 5xx, and every error is problem+json', async () => {
  const routes = servedRoutes(hangar.server.app);
  const queryNamesOf = queryNamesByRoute();
  // The route list read from the router holds every operation of the OpenAPI document, so nothing is skipped.
  const served = new Set(routes.map((route) => `${route.method} ${route.url}`));
  const document = hangar.server.app.swagger() as { paths: Record<string, Record<string, unknown>> };
  for (const [path, operations] of Object.entries(document.paths))
    for (const method of Object.keys(operations))
      assert.ok(served.has(`${method.toUpperCase()} /api/v1${fastifyPattern(path)}`), `${method} ${path} not found`);
  for (const hidden of ['POST /webhooks/w/:uid/:token', `GET ${WORKER_WEBSOCKET}`, 'GET /favicon.svg'])
    assert.ok(served.has(hidden), `${hidden} not found`);

  for (const route of routes) {
    // Every name the route reads, once in each shape that is not one string: with the right key and real path
    // values, so the query reaches the code that reads it (the worker websocket's worker_id=a&worker_id=b was a 500).
    for (const name of queryNamesOf(route)) {
      const key = percentEncode(name);
      const path = plainPath(route.url);
      for (const query of [`${key}=a&${key}=b`, `${key}[]=a&${key}[a]=b&${key}%5B0%5D=c`, `${key}=${'x'.repeat(6000)}`])
        await sendHostile(route, { path, query, credential: 'right', upgrade: false, html: false });
      // Hooks that run before validation see the query of an upgrade request too (the worker websocket's did).
      if (route.method === 'GET')
        await sendHostile(route, { path, query: `${key}=a&${key}=b`, credential: 'right', upgrade: true, html: false });
    }
    await fc.assert(
      fc.asyncProperty(hostileRequest(route, queryNamesOf(route)), (request) => sendHostile(route, request)),
      settings(6),
    );
  }
});

/** Connections of sendBytes the server has not closed yet. */
const openConnections = new Set<net.Socket>();
/** Writes raw bytes on a connection of their own and reads what comes back until the server closes it. */
function sendBytes(bytes: string): Promise<string> {
  const url = new URL(hangar.url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(url.port), url.hostname, () => socket.end(bytes));
    openConnections.add(socket);
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk));
    socket.on('error', (error: NodeJS.ErrnoException) =>
      error.code === 'ECONNRESET' ? resolve(answer) : reject(error),
    );
    socket.on('close', () => {
      openConnections.delete(socket);
      resolve(answer);
    });
  });
}

test('requests the HTTP parser refuses (an oversized head, malformed HTTP) get a problem+json answer too', async () => {
  const oversized = await rawRequest(hangar.url, {
    method: 'GET',
    path: `/api/v1/agent/runs?q=${'x'.repeat(20_000)}`,
    headers: { authorization: `Bearer ${hangar.apiKey}` },
  });
  assert.equal(oversized.status, 431);
  assert.match(String(oversized.headers['content-type']), /^application\/problem\+json/);
  assert.equal(JSON.parse(oversized.text).status, 431);
  for (const bytes of ['GET / HTTP/9.9\r\n\r\n', 'NOT A REQUEST\r\n\r\n', 'GET /\u0000 HTTP/1.1\r\nHost: x\r\n\r\n']) {
    const answer = await sendBytes(bytes);
    assert.match(answer, /^HTTP\/1\.1 400 /, JSON.stringify(bytes));
    assert.match(answer, /content-type: application\/problem\+json/i, JSON.stringify(bytes));
    const problem = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as { status: number; error_code: string };
    assert.equal(problem.status, 400);
    assert.equal(problem.error_code, 'invalid_request');
  }
});

test('an upgrade request refused before routing gets its problem+json and its connection closed', {
  timeout: 60_000,
}, async () => {
  // Such a socket has left Node's HTTP server: left open, it would stay open for good and hold up shutdown.
  const upgrade =
    'Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==';
  for (const path of ['/api/v1/agent/runs/%zz', `/api/v1/agent/runs/${'x'.repeat(300)}`]) {
    // sendBytes resolves when the server closes the connection.
    const answer = await sendBytes(`GET ${path} HTTP/1.1\r\nHost: x\r\n${upgrade}\r\n\r\n`);
    assert.match(answer, /^HTTP\/1\.1 4\d\d /, path);
    assert.match(answer, /content-type: application\/problem\+json/i, path);
  }
});
