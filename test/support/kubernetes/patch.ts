import { badRequest, StatusError } from './status.js';

/**
 * PATCH bodies by their content type: a JSON Patch (RFC 6902: add, remove, replace, test; the client's default),
 * a JSON merge patch (RFC 7386), or a strategic merge patch, applied here as a merge patch (the double keeps no
 * per-field merge keys, so a strategic patch of a list replaces it). Server-side apply is refused (415).
 */
export function applyPatch(
  target: Record<string, unknown>,
  body: unknown,
  contentType: string,
): Record<string, unknown> {
  const type = contentType.split(';')[0]?.trim();
  if (type === 'application/json-patch+json') return jsonPatch(target, body);
  if (type === 'application/merge-patch+json' || type === 'application/strategic-merge-patch+json')
    return mergePatch(target, body) as Record<string, unknown>;
  throw new StatusError({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json (the double has no server-side apply: ${type})`,
    reason: 'UnsupportedMediaType',
    code: 415,
  });
}

function mergePatch(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const result: Record<string, unknown> =
    target && typeof target === 'object' && !Array.isArray(target) ? { ...(target as Record<string, unknown>) } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = mergePatch(result[key], value);
  }
  return result;
}

type Operation = { op: string; path: string; value?: unknown };

function jsonPatch(target: Record<string, unknown>, body: unknown): Record<string, unknown> {
  if (!Array.isArray(body)) throw badRequest('json: cannot unmarshal object into Go value of type jsonpatch.Patch');
  const document = structuredClone(target);
  for (const operation of body as Operation[]) {
    const keys = operation.path
      .split('/')
      .slice(1)
      .map((key) => key.replace(/~1/g, '/').replace(/~0/g, '~'));
    const last = keys.pop();
    if (last === undefined) throw badRequest(`invalid JSON Patch path: ${operation.path}`);
    let parent: unknown = document;
    for (const key of keys) {
      parent = (parent as Record<string, unknown>)?.[key];
      if (parent === undefined || parent === null)
        throw badRequest(
          `the server rejected our request due to an error in our request: missing path ${operation.path}`,
        );
    }
    const container = parent as Record<string, unknown> & unknown[];
    if (operation.op === 'test') {
      if (JSON.stringify(container[last]) !== JSON.stringify(operation.value))
        throw new StatusError({
          kind: 'Status',
          apiVersion: 'v1',
          metadata: {},
          status: 'Failure',
          message: `testing value ${operation.path} failed`,
          reason: 'Invalid',
          code: 422,
        });
    } else if (operation.op === 'remove') {
      if (Array.isArray(container)) container.splice(Number(last), 1);
      else delete container[last];
    } else if (operation.op === 'add' && Array.isArray(container)) {
      container.splice(last === '-' ? container.length : Number(last), 0, operation.value);
    } else if (operation.op === 'add' || operation.op === 'replace') {
      container[last] = operation.value;
    } else throw badRequest(`unsupported JSON Patch operation: ${operation.op}`);
  }
  return document;
}
