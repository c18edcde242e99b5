import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { logContext, withLogFields } from '../../src/platform/log-context.js';
import { endSpan, startSpan, withSpan } from '../../src/platform/tracing.js';
import { eventually, harnessEnv, script, waitForState } from '../support/engine.js';
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from '../support/otlp-receiver.js';
import { stopChild } from '../support/processes.js';
import { createRun } from '../support/runs.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { connectedWorkers, startWorker } from '../support/workers.js';

const SERVER = 2;
const CLIENT = 3;
const UNSET = 0;
const ERROR = 2;

describe('OpenTelemetry traces, exported to a real OTLP/HTTP receiver', () => {
  let receiver: OtlpReceiver;
  let hangar: TestServer;
  before(async () => {
    receiver = await startOtlpReceiver();
    // The SDK reads the standard variables from the process's environment; the configuration from its own.
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.url;
    process.env.OTEL_BSP_SCHEDULE_DELAY = '50';
    process.env.OTEL_SERVICE_NAME = 'hangar-test';
    hangar = await startTestServer(harnessEnv({}, { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url }));
  });
  after(async () => {
    await hangar?.stop();
    await receiver?.stop();
  });

  const one = (spans: ReceivedSpan[], check: (span: ReceivedSpan) => boolean) => spans.find(check);

  test("a run's trace: the create request, then the run with its claim, setup, setup command, agent and end", async () => {
    const environment = await hangar.request('POST', '/api/v1/environments', {
      body: { name: 'traced', setup_commands: ['echo ready'] },
    });
    assert.equal(environment.status, 201, JSON.stringify(environment.body));
    const runId = await createRun(hangar, {
      prompt: script({ say: 'hi' }),
      config: { environment_id: environment.body.uid },
    });
    assert.equal((await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR')).state, 'SUCCEEDED');

    const spans = await receiver.waitFor('the run, ended', (all) =>
      all.some((span) => span.name === 'run' && span.attributes['hangar.run_id'] === runId),
    );
    const run = one(spans, (span) => span.name === 'run' && span.attributes['hangar.run_id'] === runId)!;
    assert.equal(run.service, 'hangar-test');
    assert.equal(run.attributes['hangar.team'], hangar.teamUid);
    assert.equal(run.attributes['hangar.harness'], 'script');
    assert.equal(run.attributes['hangar.state'], 'SUCCEEDED');
    const request = one(spans, (span) => span.spanId === run.parentSpanId)!;
    assert.ok(request, 'the run span is a child of the request that created the run');
    assert.equal(request.kind, SERVER);
    assert.equal(request.name, 'POST /api/v1/agent/runs');
    assert.equal(request.attributes['http.route'], '/api/v1/agent/runs');
    assert.equal(request.attributes['http.response.status_code'], 200);
    assert.equal(request.traceId, run.traceId);
    assert.ok(
      spans.some(
        (span) =>
          span.parentSpanId === request.spanId && String(span.attributes['db.query.text']).includes('INSERT INTO runs'),
      ),
      'the insert of the run is a database span of the request',
    );

    const children = (parent: ReceivedSpan) => spans.filter((span) => span.parentSpanId === parent.spanId);
    const underRun = children(run).map((span) => span.name);
    for (const name of ['claim', 'setup', 'agent', 'end']) assert.ok(underRun.includes(name), `${name} under run`);
    const setup = one(children(run), (span) => span.name === 'setup')!;
    const command = one(children(setup), (span) => span.name === 'setup command')!;
    assert.ok(command, 'each setup command is a span under setup');
    assert.equal(command.attributes['hangar.setup.index'], 0);
    assert.equal(command.attributes['process.exit.code'], 0);
    const agent = one(children(run), (span) => span.name === 'agent')!;
    assert.equal(agent.attributes['hangar.harness'], 'script');
    for (const span of [setup, command, agent]) assert.equal(span.traceId, run.traceId);
    // The engine's batched statements (its writes, the follow-ups read at each start) serve many runs at once,
    // so they are in no run's trace.
    const runStatements = spans
      .filter((span) => span.traceId === run.traceId && span.kind === CLIENT)
      .map((span) => String(span.attributes['db.query.text'] ?? span.name));
    assert.ok(!runStatements.some((text) => text.includes('"run_inputs"')), runStatements.join(' | '));
  });

  test("a self-hosted worker's spans join the run's trace: context crosses the websocket", async () => {
    const worker = startWorker(hangar, 'traced-worker', {
      env: { ...harnessEnv(), OTEL_SERVICE_NAME: 'hangar-worker-test', OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url },
    });
    try {
      // The worker loads the tracing SDK before it connects, which takes seconds on a busy machine.
      await eventually(
        'the worker connected',
        async () => (await connectedWorkers(hangar)).some((worker) => worker.worker_host === 'traced-worker'),
        120_000,
      );
      const runId = await createRun(hangar, {
        prompt: script({ say: 'hi' }),
        config: { worker_host: 'traced-worker' },
      });
      assert.equal((await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR')).state, 'SUCCEEDED');
      const spans = await receiver.waitFor("the worker's run span", (all) =>
        all.some((span) => span.service === 'hangar-worker-test' && span.attributes['hangar.run_id'] === runId),
      );
      const run = one(spans, (span) => span.service === 'hangar-worker-test' && span.name === 'run')!;
      const request = one(spans, (span) => span.spanId === run.parentSpanId)!;
      assert.ok(request, "the worker's run span is a child of the server's create request");
      assert.equal(request.service, 'hangar-test');
      assert.equal(request.attributes['http.route'], '/api/v1/agent/runs');
      assert.equal(run.traceId, request.traceId);
      await receiver.waitFor("the worker's agent span", (all) =>
        all.some((span) => span.name === 'agent' && span.parentSpanId === run.spanId),
      );
    } finally {
      await stopChild(worker.child);
    }
  });

  test('a transaction is one database span, its statements counted on it rather than spans of their own', async () => {
    // A create with an Idempotency-Key inserts the run and records the key in one transaction.
    const created = await hangar.request('POST', '/api/v1/agent/runs', {
      body: { prompt: 'x', config: { worker_host: 'nobody-here' } },
      headers: { 'idempotency-key': `traced-${Date.now()}` },
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const traceId = created.headers.get('x-request-id')!;
    const spans = await receiver.waitFor('the keyed create', (all) =>
      all.some((span) => span.traceId === traceId && span.kind === SERVER),
    );
    const request = one(spans, (span) => span.traceId === traceId && span.kind === SERVER)!;
    const underRequest = spans.filter((span) => span.parentSpanId === request.spanId);
    const transaction = one(underRequest, (span) => span.name === 'db transaction')!;
    assert.ok(transaction, `a transaction span under the request (${underRequest.map((span) => span.name)})`);
    assert.equal(transaction.kind, CLIENT);
    assert.equal(transaction.status, UNSET);
    assert.equal(transaction.attributes['db.system.name'], 'postgresql');
    assert.equal(transaction.attributes['hangar.db.transaction.outcome'], 'commit');
    // The run's insert, the key's insert (attachments: none, no statement).
    assert.ok(Number(transaction.attributes['hangar.db.statements']) >= 2);
    assert.match(String(transaction.attributes['hangar.db.operations']), /^(\w+ )*WITH (\w+ )*INSERT/);
    const texts = underRequest.map((span) => String(span.attributes['db.query.text'] ?? ''));
    assert.ok(!texts.some((text) => text.includes('run_idempotency_keys') && text.includes('insert')));
    assert.ok(!texts.some((text) => text.includes('INSERT INTO runs')), "the run's insert is the transaction's");
    // Statements outside the transaction keep a span each: the key's lookup before it.
    assert.ok(
      texts.some((text) => text.includes('run_idempotency_keys')),
      'the lookup of the key is a span',
    );
  });

  test("a create's statements: its run is not read back for the queue reason, and the engines' wake-up is in no request's trace", async () => {
    const create = () =>
      hangar.request('POST', '/api/v1/agent/runs', { body: { prompt: 'x', config: { worker_host: 'nobody-here' } } });
    const created = await create();
    assert.equal(created.status, 200, JSON.stringify(created.body));
    assert.equal(created.body.queue_reason.code, 'waiting_for_worker', 'the reason is still given');
    const traceId = created.headers.get('x-request-id')!;
    // A second request's span arriving means the first's statements (the NOTIFY settles after the answer) have too.
    const next = (await create()).headers.get('x-request-id')!;
    const spans = await receiver.waitFor('both creates', (all) =>
      [traceId, next].every((id) => all.some((span) => span.traceId === id && span.kind === SERVER)),
    );
    const texts = spans
      .filter((span) => span.traceId === traceId)
      .map((span) => String(span.attributes['db.query.text'] ?? span.name));
    assert.ok(
      texts.some((text) => text.includes('INSERT INTO runs')),
      `the insert is traced: ${texts.join(' | ')}`,
    );
    assert.ok(!texts.some((text) => /from "runs" where "id"/i.test(text)), `no read-back: ${texts.join(' | ')}`);
    // The NOTIFY that wakes the engines serves every run committed meanwhile, so it is filed under none of them.
    assert.ok(!texts.some((text) => text.includes('pg_notify')), `no wake-up: ${texts.join(' | ')}`);
  });

  test("a transaction that fails: its span is an error, with the failed statement's text and the rollback", async () => {
    const parent = startSpan('a traced piece of work');
    await assert.rejects(
      withSpan(parent, async () => {
        await sql`SELECT count(*) FROM runs WHERE id = ${'no-such-run'}`.execute(hangar.db);
        await hangar.db.transaction().execute(async (trx) => {
          await sql`SELECT 1`.execute(trx);
          await sql`SELECT 1 / ${0}::int AS nothing`.execute(trx);
        });
      }),
      /division by zero/,
    );
    endSpan(parent);
    const parentId = parent!.spanContext().spanId;
    const spans = await receiver.waitFor('the failed transaction', (all) =>
      all.some((span) => span.parentSpanId === parentId && span.name === 'db transaction'),
    );
    const children = spans.filter((span) => span.parentSpanId === parentId);
    const transaction = one(children, (span) => span.name === 'db transaction')!;
    assert.equal(transaction.status, ERROR);
    assert.equal(transaction.attributes['hangar.db.transaction.outcome'], 'rollback');
    assert.equal(transaction.attributes['hangar.db.statements'], 2);
    assert.equal(transaction.attributes['hangar.db.operations'], 'SELECT SELECT');
    assert.match(String(transaction.attributes['db.query.text']), /SELECT 1 \/ \$1::int/);
    const statement = one(children, (span) => span.name === 'db SELECT')!;
    assert.match(String(statement.attributes['db.query.text']), /SELECT count\(\*\) FROM runs/);
    assert.equal(children.length, 2, 'the statements inside the transaction make no spans');
  });

  test("a problem+json answer's trace_id is its request span's trace id, also in x-request-id", async () => {
    const missing = await hangar.request('GET', '/api/v1/agent/runs/00000000-0000-0000-0000-000000000000');
    assert.equal(missing.status, 404);
    const traceId = missing.body.trace_id as string;
    assert.match(traceId, /^[0-9a-f]{32}$/);
    assert.equal(missing.headers.get('x-request-id'), traceId);
    // The request's own span ends after its database spans, which may come in an earlier batch.
    const spans = await receiver.waitFor('the 404 request', (all) =>
      all.some((span) => span.traceId === traceId && span.kind === SERVER),
    );
    const span = one(spans, (candidate) => candidate.traceId === traceId && candidate.kind === SERVER)!;
    assert.equal(span.attributes['http.route'], '/api/v1/agent/runs/:runId');
    assert.equal(span.attributes['http.response.status_code'], 404);
  });

  test("a caller's traceparent makes the request a child of the caller's span", async () => {
    const callerTrace = '4bf92f3577b34da6a3ce929d0e0e4736';
    const response = await hangar.request('GET', '/api/v1/agent/runs', {
      headers: { traceparent: `00-${callerTrace}-00f067aa0ba902b7-01` },
    });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('x-request-id'), callerTrace);
    const spans = await receiver.waitFor('the caller trace', (all) =>
      all.some((span) => span.traceId === callerTrace && span.kind === SERVER),
    );
    assert.equal(
      one(spans, (span) => span.traceId === callerTrace && span.kind === SERVER)!.parentSpanId,
      '00f067aa0ba902b7',
    );
  });

  test('span attributes carry no credentials of URLs: webhook tokens, signatures, task tokens', async () => {
    const token = 'whsec-path-token-that-must-not-leak';
    const delivered = await fetch(`${hangar.url}/webhooks/w/wh_nosuch/${token}`, { method: 'POST', body: '{}' });
    assert.equal(delivered.status, 404);
    const key = 'task-token-that-must-not-leak';
    const proxied = await fetch(`${hangar.url}/api/v1/nothing-here?key=${key}&signature=sig-that-must-not-leak`);
    assert.equal(proxied.status, 404);
    const ids = [delivered.headers.get('x-request-id'), proxied.headers.get('x-request-id')];
    const spans = await receiver.waitFor('both requests', (all) =>
      ids.every((id) => all.some((span) => span.traceId === id && span.kind === SERVER)),
    );
    const text = JSON.stringify(spans);
    for (const secret of [token, key, 'sig-that-must-not-leak']) assert.ok(!text.includes(secret), secret);
    const webhook = one(spans, (span) => span.traceId === ids[0] && span.kind === SERVER)!;
    assert.equal(webhook.attributes['url.path'], '/webhooks/w/wh_nosuch/[redacted]');
    const api = one(spans, (span) => span.traceId === ids[1] && span.kind === SERVER)!;
    assert.equal(api.attributes['url.path'], '/api/v1/nothing-here?key=[redacted]&signature=[redacted]');
  });

  test("log lines carry the active span's trace_id and the run_id of the work in progress", () => {
    const span = startSpan('log test');
    const fields = withLogFields({ run_id: 'run-1' }, () => withSpan(span, () => logContext()));
    endSpan(span);
    assert.equal(fields.run_id, 'run-1');
    assert.equal(fields.trace_id, span!.spanContext().traceId);
    assert.equal(fields.span_id, span!.spanContext().spanId);
    assert.deepEqual(logContext(), {}, 'nothing outside the work and the span');
  });

  test("a traced server loads the trace SDK alone: no other signal's SDK or exporters, instrumentations or gRPC", () => {
    // The all-signals SDK (sdk-node) loaded 2,176 modules and cost 37 MB more memory than this (see tracing.ts).
    // (The OTLP exporter's own transformer loads sdk-metrics and api-logs, for their types' serialisers.)
    const loaded = Object.keys(createRequire(import.meta.url).cache);
    assert.ok(
      loaded.some((file) => file.includes('/@opentelemetry/sdk-trace-node/')),
      'the trace SDK is loaded',
    );
    const others = loaded.filter((file) =>
      /\/@opentelemetry\/(sdk-node|sdk-logs|instrumentation|propagator-[^/]*|[^/]*grpc[^/]*|exporter-(?!trace-otlp)[^/]*)\/|\/@grpc\//.test(
        file,
      ),
    );
    assert.deepEqual([...new Set(others.map((file) => /.*\/node_modules\/(@[^/]+\/[^/]+)/.exec(file)?.[1]))], []);
  });
});
