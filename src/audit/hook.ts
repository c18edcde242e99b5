import type { FastifyInstance, FastifyRequest } from 'fastify';
import { callerOf, principalOf } from '../identities/index.js';
import { AUDITED_ROUTES, type AuditedRoute, RECORDED_FIELDS } from './actions.js';
import type { AuditLog } from './service.js';

/** The route as AUDITED_ROUTES names it: method and path under /api/v1. */
export function routeKey(method: string, url: string): string {
  return `${method} ${url.replace(/^\/api\/v1(?=\/)/, '')}`;
}

/** The uid of what a creation answered with, from its JSON body. */
function createdTarget(payload: unknown): string | null {
  if (typeof payload !== 'string' || !payload.startsWith('{')) return null;
  try {
    const body = JSON.parse(payload) as Record<string, unknown>;
    for (const field of ['uid', 'id', 'key_uid', 'name']) if (typeof body[field] === 'string') return body[field];
  } catch {
    // Not JSON: no target from the answer.
  }
  return null;
}

/** What a request changed, without any value that could be a secret (see RECORDED_FIELDS). */
function detailsOf(request: FastifyRequest): Record<string, unknown> {
  const details: Record<string, unknown> = {};
  const params = request.params as Record<string, string> | undefined;
  if (params && Object.keys(params).length > 0) details.params = params;
  const body = request.body;
  if (body && typeof body === 'object' && !Array.isArray(body) && !Buffer.isBuffer(body)) {
    const recorded: Record<string, unknown> = {};
    const named: string[] = [];
    for (const [field, value] of Object.entries(body)) {
      if (RECORDED_FIELDS.has(field) && (value === null || typeof value !== 'object')) recorded[field] = value;
      else named.push(field);
    }
    if (Object.keys(recorded).length > 0) details.fields = recorded;
    if (named.length > 0) details.changed = named.sort();
  }
  return details;
}

function teamOf(request: FastifyRequest, route: AuditedRoute): string | null {
  if (route.team) return (request.params as Record<string, string>)[route.team] ?? null;
  if (route.instance) return null;
  return callerOf(request).teamUid;
}

/**
 * Records every successful call of an audited route (AUDITED_ROUTES) once its answer is ready, before it is sent:
 * who (principal and key), from where (the client address, which follows HANGAR_TRUST_PROXY), what and when.
 */
export function recordAuditedRoutes(app: FastifyInstance, audit: AuditLog): void {
  app.addHook('onSend', async (request, reply, payload) => {
    if (reply.statusCode >= 300) return payload;
    const route = AUDITED_ROUTES[routeKey(request.method, request.routeOptions.url ?? '')];
    if (!route) return payload;
    const principal = principalOf(request);
    const params = request.params as Record<string, string>;
    await audit.record({
      teamUid: teamOf(request, route),
      actorType: principal.type,
      actorUid: principal.uid,
      keyUid: principal.keyUid ?? null,
      clientAddress: request.ip ?? null,
      action: route.action,
      target: route.target ? (params[route.target] ?? null) : createdTarget(payload),
      details: detailsOf(request),
    });
    return payload;
  });
}
