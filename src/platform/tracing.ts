import {
  type Attributes,
  type Context,
  context,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import type { NodeTracerProvider, SpanExporter } from '@opentelemetry/sdk-trace-node';

/**
 * OpenTelemetry traces, off unless the standard variables point at an OTLP/HTTP receiver
 * (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), sent as protobuf (the protocol's default) or
 * JSON (OTEL_EXPORTER_OTLP_PROTOCOL=http/json). The SDK reads the other OTEL_* variables itself
 * (OTEL_SERVICE_NAME, OTEL_EXPORTER_OTLP_HEADERS, OTEL_BSP_SCHEDULE_DELAY, OTEL_TRACES_SAMPLER, ...).
 * Spans are Hangar's own (requests, run executions, database statements): no automatic instrumentation is loaded,
 * so nothing patches modules behind the program's back and the cost is what these spans cost.
 */

const tracer = trace.getTracer('hangar');
let provider: NodeTracerProvider | undefined;

/** Whether the environment asks for traces: an OTLP endpoint is set and the SDK is not disabled. */
export function tracingRequested(env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  const exporters = (env.OTEL_TRACES_EXPORTER ?? '').split(',').map((name) => name.trim());
  if (exporters.includes('none')) return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim());
}

export type TraceProtocol = 'http/protobuf' | 'http/json';

/**
 * The OTLP/HTTP encoding traces are sent in: OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL,
 * else protobuf, the specification's default (and what collectors expect unless told otherwise). A protobuf batch
 * is about a third of the JSON one's bytes; the CPU to make either was the same within noise in the dispatch drain
 * (bench/RESULTS.md#observability). gRPC is refused with a clear message: Hangar ships the HTTP exporters only.
 */
export function traceProtocol(env: NodeJS.ProcessEnv = process.env): TraceProtocol {
  const value = (
    env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL?.trim() ||
    env.OTEL_EXPORTER_OTLP_PROTOCOL?.trim() ||
    ''
  ).toLowerCase();
  if (value === '' || value === 'http/protobuf') return 'http/protobuf';
  if (value === 'http/json') return 'http/json';
  throw new Error(
    `OTEL_EXPORTER_OTLP_PROTOCOL "${value}" is not supported: Hangar exports traces over OTLP/HTTP, as http/protobuf (the default) or http/json`,
  );
}

/**
 * Starts the tracing SDK once per process: a tracer provider with the OTLP/HTTP exporter behind a batching
 * processor, AsyncLocalStorage for the active span, and W3C Trace Context (and Baggage) for propagation. Later
 * calls (a second server in one process) share it. It is loaded only here, so that no process without tracing
 * (and no CLI verb) pays for it.
 *
 * The trace SDK alone (`sdk-trace-node`), not the all-signals `sdk-node`: that one loads every exporter,
 * propagator and instrumentation package it could be configured with (2,176 modules against 265 with this
 * exporter, measured), which cost a traced process 37 MB more memory, 16 MB of it heap that every garbage
 * collection walks.
 */
export async function startTracing(serviceVersion: string): Promise<void> {
  if (provider) return;
  const protocol = traceProtocol();
  const [{ NodeTracerProvider, BatchSpanProcessor }, { OTLPTraceExporter }, resources] = await Promise.all([
    import('@opentelemetry/sdk-trace-node'),
    protocol === 'http/json'
      ? import('@opentelemetry/exporter-trace-otlp-http')
      : import('@opentelemetry/exporter-trace-otlp-proto'),
    import('@opentelemetry/resources'),
  ]);
  if (provider) return;
  // As the SDK describes a process: its version, then what the environment says (OTEL_RESOURCE_ATTRIBUTES, the
  // host, the process), then its service name, which wins.
  const resource = resources
    .resourceFromAttributes({ 'service.version': serviceVersion })
    .merge(
      resources.detectResources({
        detectors: [resources.envDetector, resources.processDetector, resources.hostDetector],
      }),
    )
    .merge(resources.resourceFromAttributes({ 'service.name': process.env.OTEL_SERVICE_NAME?.trim() || 'hangar' }));
  // The provider reads OTEL_TRACES_SAMPLER and the span limits, the processor OTEL_BSP_*, the exporter its
  // OTEL_EXPORTER_OTLP_* variables.
  provider = new NodeTracerProvider({
    resource,
    spanProcessors: [new BatchSpanProcessor(offTheEndingStack(new OTLPTraceExporter()))],
  });
  provider.register();
}

/**
 * The batching processor exports as soon as a span's end fills a batch (512 spans by default), from inside that
 * span.end(): the batch's serialisation would then run in whatever ended it (a request's last hook, a database
 * statement's settling). This moves each export to a turn of the event loop of its own.
 */
function offTheEndingStack(exporter: SpanExporter): SpanExporter {
  return {
    export: (spans, done) => void setImmediate(() => exporter.export(spans, done)),
    shutdown: () => exporter.shutdown(),
    forceFlush: () => exporter.forceFlush?.() ?? Promise.resolve(),
  };
}

export function tracingOn(): boolean {
  return provider !== undefined;
}

/** Sends the spans ended so far (a server stopping; the SDK keeps running for the process's other servers). */
export async function flushTracing(): Promise<void> {
  await provider?.forceFlush().catch(() => undefined);
}

/** A span started now under `parent` (the active context by default); undefined when tracing is off. */
export function startSpan(
  name: string,
  options: { attributes?: Attributes; kind?: SpanKind; parent?: Context; startTime?: Date } = {},
): Span | undefined {
  if (!provider) return undefined;
  const { parent, ...rest } = options;
  return tracer.startSpan(name, rest, parent ?? context.active());
}

/** Whether the active context is in a recorded span: what startChildSpan needs to make one. */
export function inRecordedSpan(): boolean {
  return provider !== undefined && trace.getSpan(context.active())?.isRecording() === true;
}

/** A span started as a child of the active one, only when there is one (a statement outside any trace gets none). */
export function startChildSpan(
  name: string,
  options: { attributes?: Attributes; kind?: SpanKind } = {},
): Span | undefined {
  if (!inRecordedSpan()) return undefined;
  return tracer.startSpan(name, options);
}

/** Runs `work` outside any trace: the statements it makes get no span (see startChildSpan). */
export function outsideTraces<T>(work: () => T): T {
  return provider ? context.with(ROOT_CONTEXT, work) : work();
}

/** Runs `work` with `span` as the active span (so that spans started inside are its children). */
export function withSpan<T>(span: Span | undefined, work: () => T): T {
  if (!span) return work();
  return context.with(trace.setSpan(context.active(), span), work);
}

/** Ends a span, marked as an error when `error` is given; a span already ended stays as it ended. */
export function endSpan(span: Span | undefined, error?: unknown): void {
  if (!span?.isRecording()) return;
  if (error !== undefined) {
    span.recordException(error instanceof Error ? error : String(error));
    span.setStatus({ code: SpanStatusCode.ERROR });
  }
  span.end();
}

/** `work` in a child span of the active one, ended when it settles (an error when it throws). */
export async function inSpan<T>(
  name: string,
  attributes: Attributes,
  work: (span: Span | undefined) => Promise<T>,
): Promise<T> {
  const span = startSpan(name, { attributes });
  try {
    const result = await withSpan(span, () => work(span));
    endSpan(span);
    return result;
  } catch (error) {
    endSpan(span, error);
    throw error;
  }
}

/** The active span's trace and span ids, for log lines; empty outside a recorded span. */
export function traceFields(): { trace_id?: string; span_id?: string } {
  const span = provider ? trace.getSpan(context.active()) : undefined;
  if (!span?.isRecording()) return {};
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}

/** The active context as a W3C `traceparent` value, to carry it elsewhere (a run's row, a worker); undefined when off. */
export function activeTraceparent(): string | undefined {
  if (!provider) return undefined;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent;
}

/** The context a carried `traceparent` names (the root context when there is none). */
export function contextOf(traceparent: string | null | undefined): Context {
  if (!traceparent) return ROOT_CONTEXT;
  return propagation.extract(ROOT_CONTEXT, { traceparent });
}

/** The context an incoming request's headers carry (`traceparent`, `tracestate`). */
export function contextOfHeaders(headers: Record<string, string | string[] | undefined>): Context {
  return propagation.extract(ROOT_CONTEXT, headers);
}

export { type Span, SpanKind };
