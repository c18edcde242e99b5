import { createRequire } from 'node:module';
import * as k8s from '@kubernetes/client-node';
import type { StatusCause } from './status.js';

/**
 * Checks an object against the Kubernetes OpenAPI schemas, two ways:
 * - the schema's types, formats and required fields, with the validators `kubernetes-models` compiled from the
 *   API's OpenAPI document (Kubernetes 1.33);
 * - unknown fields, with the model type table of `@kubernetes/client-node` (generated from the 1.34 document): what
 *   a real API server drops with a warning, or refuses under `fieldValidation=Strict`, is named here, so a typo in
 *   a spec cannot pass unnoticed.
 * Used by the API double for every object it receives and by the deploy files' test for every rendered object.
 */
const require = createRequire(import.meta.url);

interface SchemaError {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
}

type ModelClass = new (data: unknown) => { validate(): void };

/** `batch/v1` + `Job` → `kubernetes-models/batch/v1/Job`; `v1` + `Pod` → `kubernetes-models/v1/Pod`. */
function modelClass(apiVersion: string, kind: string): ModelClass | undefined {
  try {
    const module = require(`kubernetes-models/${apiVersion}/${kind}`) as Record<string, ModelClass>;
    return module[kind];
  } catch {
    return undefined;
  }
}

/** The schema's complaints, as the API server's causes (`spec.template.spec.containers[0].image`). */
export function schemaCauses(object: { apiVersion?: string; kind?: string }): StatusCause[] {
  const { apiVersion, kind } = object;
  if (!apiVersion || !kind)
    return [{ reason: 'FieldValueRequired', message: 'Required value', field: apiVersion ? 'kind' : 'apiVersion' }];
  const Model = modelClass(apiVersion, kind);
  if (!Model)
    return [{ reason: 'FieldValueNotSupported', message: `no schema for ${apiVersion} ${kind}`, field: 'kind' }];
  try {
    new Model(object).validate();
    return [];
  } catch (error) {
    const errors = (error as { errors?: SchemaError[] }).errors;
    if (!errors) throw error;
    return collapse(errors).map(toCause);
  }
}

/** Ajv reports each branch of a oneOf (int-or-string, quantities); one cause per field is what a person reads. */
function collapse(errors: SchemaError[]): SchemaError[] {
  const byPath = new Map<string, SchemaError>();
  for (const error of errors) {
    const path =
      error.keyword === 'required'
        ? `${error.instancePath}/${String(error.params.missingProperty)}`
        : error.instancePath;
    const seen = byPath.get(path);
    if (!seen || (seen.keyword === 'oneOf' && error.keyword !== 'oneOf')) byPath.set(path, error);
  }
  return [...byPath.values()];
}

function toCause(error: SchemaError): StatusCause {
  const pointer =
    error.keyword === 'required' ? `${error.instancePath}/${String(error.params.missingProperty)}` : error.instancePath;
  const field = fieldPath(pointer);
  if (error.keyword === 'required') return { reason: 'FieldValueRequired', message: 'Required value', field };
  if (error.keyword === 'enum')
    return { reason: 'FieldValueNotSupported', message: `Unsupported value: ${error.message ?? ''}`, field };
  return { reason: 'FieldValueInvalid', message: `Invalid value: ${error.message ?? error.keyword}`, field };
}

/** `/spec/containers/0/image` → `spec.containers[0].image`, the API server's way of naming a field. */
export function fieldPath(pointer: string): string {
  return pointer
    .split('/')
    .filter(Boolean)
    .reduce((path, part) => (/^\d+$/.test(part) ? `${path}[${part}]` : path ? `${path}.${part}` : part), '');
}

type AttributeMap = Array<{ baseName: string; type: string }>;
type ModelTable = Record<string, { getAttributeTypeMap?: () => AttributeMap } | undefined>;

/** Every field of `object` that its type does not have (`spec.templat`), walking the client's model table. */
export function unknownFields(object: { apiVersion?: string; kind?: string }): string[] {
  const typeName = clientTypeName(object.apiVersion ?? '', object.kind ?? '');
  if (!typeName) return [];
  const found: string[] = [];
  walk(object, typeName, '', found);
  return found;
}

function walk(value: unknown, type: string, path: string, found: string[]): void {
  if (value === null || value === undefined) return;
  const array = /^Array<(.+)>$/.exec(type);
  if (array) {
    if (Array.isArray(value)) value.forEach((item, index) => walk(item, array[1]!, `${path}[${index}]`, found));
    return;
  }
  const map = /^\{ \[key: string\]: (.+); \}$/.exec(type);
  if (map) {
    if (typeof value === 'object')
      for (const [key, item] of Object.entries(value)) walk(item, map[1]!, `${path}[${key}]`, found);
    return;
  }
  const model = (k8s as unknown as ModelTable)[type];
  const attributes = model?.getAttributeTypeMap?.();
  if (!attributes || typeof value !== 'object' || Array.isArray(value)) return;
  for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
    const attribute = attributes.find((candidate) => candidate.baseName === key);
    const field = path ? `${path}.${key}` : key;
    if (!attribute) found.push(field);
    else walk(item, attribute.type, field, found);
  }
}

/** `batch/v1` + `Job` → `V1Job`; `networking.k8s.io/v1` + `NetworkPolicy` → `V1NetworkPolicy`; `policy/v1` → `V1...`. */
function clientTypeName(apiVersion: string, kind: string): string | undefined {
  // The core group's Event is CoreV1Event in the client's table (events.k8s.io has the other).
  if (apiVersion === 'v1' && kind === 'Event') return 'CoreV1Event';
  const version = apiVersion.split('/').pop() ?? '';
  const name = `${version.charAt(0).toUpperCase()}${version.slice(1)}${kind}`;
  return (k8s as unknown as ModelTable)[name]?.getAttributeTypeMap ? name : undefined;
}
