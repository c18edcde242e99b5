import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { contextOfHeaders, endSpan, type Span, SpanKind, startSpan, withSpan } from '../tracing.js';
import { redactCredentials } from './log-redaction.js';
import { routeTemplate } from './request-metrics.js';

/** Each request's span, from its id being made to its answer. */
const spans = new WeakMap<IncomingMessage, Span>();

/**
 * A request's id (Fastify's genReqId). With tracing on, every request gets a server span here, a child of the
 * caller's `traceparent` when it sends one, and the request's id is that span's trace id: the `trace_id` of a
 * problem+json answer, the `x-request-id` header and the request's log lines all lead to the trace. With tracing
 * off, the caller's `X-Request-Id` or a new UUID, as before.
 */
export function requestId(raw: IncomingMessage): string {
  const given = raw.headers['x-request-id'];
  const span = startSpan(`${raw.method ?? 'HTTP'}`, { kind: SpanKind.SERVER, parent: contextOfHeaders(raw.headers) });
  // A span the sampler dropped records nothing: its attributes are not worked out.
  if (span?.isRecording())
    span.setAttributes({
      'http.request.method': raw.method ?? '',
      // The URL with its credentials taken out, as in the logs: a url_token webhook's token, a download link's
      // signature, the model proxy's ?key= task token.
      'url.path': redactCredentials(raw.url ?? ''),
      ...(typeof given === 'string' ? { 'hangar.request_id': given } : {}),
    });
  if (!span) return typeof given === 'string' && given !== '' ? given : randomUUID();
  spans.set(raw, span);
  return span.spanContext().traceId;
}

/** Runs every request's hooks and handler under its span, and ends the span with its route and status. */
export function traceRequests(app: FastifyInstance): void {
  app.addHook('onRequest', (request, _reply, done) => {
    const span = spans.get(request.raw);
    if (!span) return done();
    withSpan(span, done);
  });
  app.addHook('onResponse', async (request, reply) => {
    const span = spans.get(request.raw);
    if (!span) return;
    spans.delete(request.raw);
    const route = routeTemplate(request);
    span.updateName(`${request.method} ${route}`);
    span.setAttributes({ 'http.route': route, 'http.response.status_code': reply.statusCode });
    endSpan(span, reply.statusCode >= 500 ? new Error(`answered ${reply.statusCode}`) : undefined);
  });
  app.addHook('onRequestAbort', async (request) => {
    const span = spans.get(request.raw);
    if (!span) return;
    spans.delete(request.raw);
    span.setAttribute('http.route', routeTemplate(request));
    endSpan(span, new Error('the client closed the connection before the answer'));
  });
}
