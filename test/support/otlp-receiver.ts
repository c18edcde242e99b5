import { EventEmitter } from 'node:events';
import http from 'node:http';
import { gunzipSync } from 'node:zlib';
import protobuf from 'protobufjs';

/** A span as an OTLP/HTTP receiver gets it, with its attributes flattened to plain values. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  kind: number;
  /** The span's status code: 0 unset, 1 ok, 2 error. */
  status: number;
  attributes: Record<string, string | number | boolean>;
  /** The `service.name` of the resource that sent it. */
  service: string | undefined;
}

export interface OtlpReceiver {
  /** The base URL: what OTEL_EXPORTER_OTLP_ENDPOINT is set to (spans are posted to /v1/traces under it). */
  url: string;
  /** The spans received (none kept with `keep: false`). */
  spans: ReceivedSpan[];
  /** How many spans were received, kept or not. */
  received(): number;
  /** Resolves with the spans received so far once `check` holds over them (checked as each batch arrives). */
  waitFor(what: string, check: (spans: ReceivedSpan[]) => boolean, timeoutMs?: number): Promise<ReceivedSpan[]>;
  stop(): Promise<void>;
}

interface AnyValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
}

/**
 * A small OpenTelemetry collector: an HTTP server that takes OTLP/HTTP trace exports in protobuf (the protocol's
 * default, what @opentelemetry/exporter-trace-otlp-proto sends) or JSON (exporter-trace-otlp-http; gzip or not) and
 * keeps their spans, as a tracing backend would. Any other body is refused with 415, so an exporter sending
 * something else shows up as a failure, not silence.
 */
export async function startOtlpReceiver(options: { keep?: boolean } = {}): Promise<OtlpReceiver> {
  // A benchmark's receiver decodes every batch as a collector would, then forgets it: a receiver holding hundreds
  // of thousands of spans would spend its CPU (on the benchmark's machine) collecting garbage instead.
  const keep = options.keep ?? true;
  const spans: ReceivedSpan[] = [];
  let received = 0;
  const arrived = new EventEmitter();
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.method !== 'POST' || request.url !== '/v1/traces') {
        response.writeHead(404).end();
        return;
      }
      const type = request.headers['content-type'] ?? '';
      const json = type.startsWith('application/json');
      if (!json && !type.startsWith('application/x-protobuf')) {
        response.writeHead(415).end();
        return;
      }
      let body = Buffer.concat(chunks);
      if (request.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
      try {
        const batch = decode(json ? JSON.parse(body.toString('utf8')) : fromProtobuf(body));
        received += batch.length;
        if (keep) spans.push(...batch);
      } catch {
        response.writeHead(400, { 'content-type': 'application/json' }).end('{}');
        return;
      }
      // An empty ExportTraceServiceResponse (everything accepted), in the request's encoding.
      if (json) response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      else response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
      arrived.emit('spans');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${address.port}`,
    spans,
    received: () => received,
    waitFor(what, check, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        const look = () => {
          if (!check(spans)) return;
          clearTimeout(timer);
          arrived.off('spans', look);
          resolve(spans);
        };
        const timer = setTimeout(() => {
          arrived.off('spans', look);
          reject(new Error(`no spans for ${what} (${spans.length} received: ${spans.map((s) => s.name).join(', ')})`));
        }, timeoutMs);
        arrived.on('spans', look);
        look();
      });
    },
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * The part of OTLP's trace schema (opentelemetry-proto, trace_service.proto, trace.proto, common.proto,
 * resource.proto) this receiver reads, with the same field numbers; protobuf skips the fields it leaves out.
 */
const TRACE_SCHEMA = `
syntax = "proto3";
message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
message ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; }
message Resource { repeated KeyValue attributes = 1; }
message ScopeSpans { repeated Span spans = 2; }
message Span {
  bytes trace_id = 1; bytes span_id = 2; bytes parent_span_id = 4; string name = 5; int32 kind = 6;
  repeated KeyValue attributes = 9; Status status = 15;
}
message Status { int32 code = 3; }
message KeyValue { string key = 1; AnyValue value = 2; }
message AnyValue {
  oneof value { string string_value = 1; bool bool_value = 2; int64 int_value = 3; double double_value = 4; }
}
`;
const exportRequest = protobuf.parse(TRACE_SCHEMA).root.lookupType('ExportTraceServiceRequest');

/** A protobuf ExportTraceServiceRequest in the shape of its OTLP/JSON form (camelCase fields, hex ids). */
function fromProtobuf(body: Buffer): unknown {
  const request = exportRequest.toObject(exportRequest.decode(body), { longs: Number, bytes: String });
  const hex = (base64: string | undefined) => (base64 ? Buffer.from(base64, 'base64').toString('hex') : undefined);
  for (const resourceSpans of request.resourceSpans ?? [])
    for (const scopeSpans of resourceSpans.scopeSpans ?? [])
      for (const span of scopeSpans.spans ?? []) {
        span.traceId = hex(span.traceId);
        span.spanId = hex(span.spanId);
        span.parentSpanId = hex(span.parentSpanId);
      }
  return request;
}

/** ExportTraceServiceRequest in OTLP/JSON: resourceSpans -> scopeSpans -> spans, ids as hex strings. */
function decode(request: any): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  for (const resourceSpans of request.resourceSpans ?? []) {
    const resource = attributes(resourceSpans.resource?.attributes);
    for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
      for (const span of scopeSpans.spans ?? []) {
        spans.push({
          traceId: span.traceId,
          spanId: span.spanId,
          parentSpanId: span.parentSpanId || undefined,
          name: span.name,
          kind: span.kind,
          status: span.status?.code ?? 0,
          attributes: attributes(span.attributes),
          service: typeof resource['service.name'] === 'string' ? resource['service.name'] : undefined,
        });
      }
    }
  }
  return spans;
}

function attributes(list: Array<{ key: string; value: AnyValue }> | undefined): ReceivedSpan['attributes'] {
  const result: ReceivedSpan['attributes'] = {};
  for (const { key, value } of list ?? []) {
    if (value.stringValue !== undefined) result[key] = value.stringValue;
    else if (value.intValue !== undefined) result[key] = Number(value.intValue);
    else if (value.doubleValue !== undefined) result[key] = value.doubleValue;
    else if (value.boolValue !== undefined) result[key] = value.boolValue;
  }
  return result;
}
