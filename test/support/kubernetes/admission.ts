import { apiVersionOf, type ResourceType } from './resources.js';
import { unknownFields } from './schema.js';
import { badRequest, invalid } from './status.js';
import type { KubeObject } from './store.js';
import { validateObject } from './validation.js';

/**
 * What the API server does with an object a client writes, before it stores it: decode it against the URL's kind
 * and namespace, refuse unknown fields (fieldValidation), validate it (schemas and rules, 422 Invalid), turn a
 * Secret's stringData into data, and drop what only the server sets (uid, resourceVersion, status, ...).
 */
export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';

export function admit(
  type: ResourceType,
  namespace: string,
  body: unknown,
  mode: FieldValidation,
  refused: Array<{ kind: string; name: string; message: string }>,
): { object: KubeObject; warnings: string[] } {
  if (!body || typeof body !== 'object' || Array.isArray(body))
    throw badRequest('the request body must be a JSON object');
  const object = structuredClone(body) as KubeObject;
  object.apiVersion ??= apiVersionOf(type);
  object.kind ??= type.kind;
  if (object.apiVersion !== apiVersionOf(type) || object.kind !== type.kind)
    throw badRequest(
      `the API version in the data (${object.apiVersion}) does not match the expected API version (${apiVersionOf(type)})`,
    );
  object.metadata ??= {};
  if (type.namespaced) {
    if (object.metadata.namespace && object.metadata.namespace !== namespace)
      throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
    object.metadata.namespace = namespace;
  }
  const unknown = mode === 'Ignore' ? [] : unknownFields(object);
  if (unknown.length && mode === 'Strict') {
    const message = `strict decoding error: ${unknown.map((field) => `unknown field "${field}"`).join(', ')}`;
    refused.push({ kind: type.kind, name: object.metadata.name ?? '', message });
    throw badRequest(message);
  }
  const causes = validateObject(object);
  if (causes.length) {
    const error = invalid(type.kind, type.group, object.metadata.name ?? object.metadata.generateName ?? '', causes);
    refused.push({ kind: type.kind, name: object.metadata.name ?? '', message: error.message });
    throw error;
  }
  if (type.kind === 'Secret') {
    const stringData = (object.stringData as Record<string, string> | undefined) ?? {};
    object.data = {
      ...(object.data as Record<string, string> | undefined),
      ...Object.fromEntries(
        Object.entries(stringData).map(([key, value]) => [key, Buffer.from(value).toString('base64')]),
      ),
    };
    delete object.stringData;
    object.type ??= 'Opaque';
  }
  for (const server of ['uid', 'resourceVersion', 'creationTimestamp', 'deletionTimestamp', 'generation'] as const)
    delete object.metadata[server];
  delete object.status;
  return { object, warnings: unknown.map((field) => `299 - "unknown field \\"${field}\\""`) };
}
