import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { context, SpanStatusCode, trace } from '@opentelemetry/api';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, SimpleSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { ConfigError, loadConfig } from '../../src/config.js';
import { traceProtocol } from '../../src/platform/tracing.js';
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from '../support/otlp-receiver.js';

describe('the OTLP encoding traces are sent in', () => {
  test('protobuf unless OTEL_EXPORTER_OTLP_PROTOCOL (or its _TRACES_ form) asks for JSON', () => {
    assert.equal(traceProtocol({}), 'http/protobuf');
    assert.equal(traceProtocol({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' }), 'http/protobuf');
    assert.equal(traceProtocol({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }), 'http/json');
    assert.equal(
      traceProtocol({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf' }),
      'http/protobuf',
    );
  });

  test('a protocol Hangar cannot send (gRPC) stops the start with a clear message, only when tracing is on', () => {
    const env = { DATABASE_URL: 'postgres://x@127.0.0.1/x', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' };
    assert.equal(loadConfig(env).tracing, false, 'without an endpoint the protocol is not looked at');
    assert.throws(
      () => loadConfig({ ...env, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4317' }),
      (error: unknown) => error instanceof ConfigError && /"grpc" is not supported.*http\/protobuf/.test(error.message),
    );
  });
});

describe("the test receiver reads both encodings as a collector would (the exporters' own output)", () => {
  let receiver: OtlpReceiver;
  before(async () => {
    receiver = await startOtlpReceiver();
  });
  after(() => receiver?.stop());

  /** One parent and one failed child span, exported by `exporter`; what the receiver made of them. */
  async function exportTwo(exporter: SpanExporter, service: string): Promise<ReceivedSpan[]> {
    const provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ 'service.name': service }),
      spanProcessors: [new SimpleSpanProcessor(exporter)],
    });
    const tracer = provider.getTracer('trace-protocol-test');
    const parent = tracer.startSpan('run', { attributes: { 'hangar.run_id': 'r-1', 'hangar.execution_id': 2 } });
    const child = tracer.startSpan(
      'agent',
      { attributes: { ok: false, share: 0.5 } },
      trace.setSpan(context.active(), parent),
    );
    child.setStatus({ code: SpanStatusCode.ERROR });
    child.end();
    parent.end();
    await provider.forceFlush();
    await provider.shutdown();
    return receiver.waitFor(service, (spans) => spans.filter((span) => span.service === service).length === 2);
  }

  for (const [name, exporter] of [
    ['protobuf', (url: string) => new ProtobufExporter({ url })],
    ['JSON', (url: string) => new JsonExporter({ url })],
  ] as const) {
    test(`${name}: ids, parent, names, attributes and status`, async () => {
      const spans = (await exportTwo(exporter(`${receiver.url}/v1/traces`), `svc-${name}`)).filter(
        (span) => span.service === `svc-${name}`,
      );
      const run = spans.find((span) => span.name === 'run')!;
      const agent = spans.find((span) => span.name === 'agent')!;
      assert.match(run.traceId, /^[0-9a-f]{32}$/);
      assert.match(run.spanId, /^[0-9a-f]{16}$/);
      assert.equal(run.parentSpanId, undefined);
      assert.deepEqual(run.attributes, { 'hangar.run_id': 'r-1', 'hangar.execution_id': 2 });
      assert.equal(agent.traceId, run.traceId);
      assert.equal(agent.parentSpanId, run.spanId);
      assert.deepEqual(agent.attributes, { ok: false, share: 0.5 });
      assert.equal(agent.status, 2);
      assert.equal(run.status, 0);
    });
  }
});
