import type { FastifyInstance } from 'fastify';
import { Counter, Histogram } from 'prom-client';
import { metricsRegistry, REQUEST_SECONDS_BUCKETS } from '../metrics.js';

const requests = new Counter({
  name: 'hangar_http_requests_total',
  help: 'HTTP requests answered, by method, route template and status code',
  labelNames: ['method', 'route', 'status'] as const,
  registers: [metricsRegistry],
});

const durations = new Histogram({
  name: 'hangar_http_request_duration_seconds',
  help: 'Time from a request to its answer, by method, route template and status class (2xx ... 5xx)',
  labelNames: ['method', 'route', 'status_class'] as const,
  buckets: REQUEST_SECONDS_BUCKETS,
  registers: [metricsRegistry],
});

/** Methods the API routes use; any other is counted as OTHER (a client may send any token as a method). */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/**
 * Counts every answer by its route's template (`/api/v1/agent/runs/:runId`), never its path: a path carries ids,
 * and each would be a series of its own. Requests no route matched count as `unmatched`.
 */
export function observeRequests(app: FastifyInstance): void {
  app.addHook('onResponse', async (request, reply) => {
    const method = METHODS.has(request.method) ? request.method : 'OTHER';
    const route = routeTemplate(request);
    requests.inc({ method, route, status: String(reply.statusCode) });
    durations.observe({ method, route, status_class: statusClass(reply.statusCode) }, reply.elapsedTime / 1000);
  });
}

/**
 * `2xx` for 201: latency split by outcome, as OpenTelemetry's http.server.request.duration is, in five values at
 * most (the exact code is the request counter's), so the histogram's series grow by the classes a route answers.
 */
export function statusClass(status: number): string {
  return status >= 100 && status < 600 ? `${Math.floor(status / 100)}xx` : 'other';
}

/** The route template of a request as the metrics and traces name it. */
export function routeTemplate(request: { routeOptions: { url?: string | undefined } }): string {
  return request.routeOptions.url ?? 'unmatched';
}
