import { badRequest } from './status.js';

/**
 * Label and field selectors in the API server's string syntax (`?labelSelector=`, `?fieldSelector=`), parsed into
 * predicates. Label selectors take every form the API server does (`a=b`, `a==b`, `a!=b`, `a in (x,y)`,
 * `a notin (x)`, `a`, `!a`); field selectors the equality forms over the fields named in `FIELDS`.
 */
export type Selector = (object: KubeObjectLike) => boolean;

export interface KubeObjectLike {
  metadata?: { name?: string; namespace?: string; labels?: Record<string, string> };
  [key: string]: unknown;
}

export function parseLabelSelector(text: string | null): Selector {
  if (!text) return () => true;
  const requirements = splitTopLevel(text).map(parseRequirement);
  return (object) => {
    const labels = object.metadata?.labels ?? {};
    return requirements.every((requirement) => requirement(labels));
  };
}

function parseRequirement(raw: string): (labels: Record<string, string>) => boolean {
  const part = raw.trim();
  let match = /^([\w./-]+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(part);
  if (match) {
    const [, key, operator, list] = match as unknown as [string, string, string, string];
    const values = new Set(list.split(',').map((value) => value.trim()));
    return operator === 'in'
      ? (labels) => key in labels && values.has(labels[key]!)
      : (labels) => !(key in labels) || !values.has(labels[key]!);
  }
  match = /^([\w./-]+)\s*(==|=|!=)\s*([\w.-]*)$/.exec(part);
  if (match) {
    const [, key, operator, value] = match as unknown as [string, string, string, string];
    return operator === '!=' ? (labels) => labels[key] !== value : (labels) => labels[key] === value;
  }
  match = /^(!?)([\w./-]+)$/.exec(part);
  if (match) {
    const [, negated, key] = match as unknown as [string, string, string];
    return negated ? (labels) => !(key in labels) : (labels) => key in labels;
  }
  throw badRequest(`unable to parse requirement: found '${part}', expected: in, notin, =, ==, !=, gt, lt`);
}

/** Splits on commas outside parentheses (`a in (x,y),b=c` is two requirements). */
function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (const character of text) {
    if (character === '(') depth++;
    if (character === ')') depth--;
    if (character === ',' && depth === 0) {
      parts.push(current);
      current = '';
    } else current += character;
  }
  if (current.trim()) parts.push(current);
  return parts;
}

/** The fields the API server lets a field selector name, per kind (metadata.name and .namespace for every kind). */
const FIELDS: Record<string, string[]> = {
  Pod: [
    'spec.nodeName',
    'spec.restartPolicy',
    'spec.schedulerName',
    'spec.serviceAccountName',
    'status.phase',
    'status.podIP',
  ],
  Event: [
    'involvedObject.kind',
    'involvedObject.namespace',
    'involvedObject.name',
    'involvedObject.uid',
    'involvedObject.apiVersion',
    'involvedObject.resourceVersion',
    'involvedObject.fieldPath',
    'reason',
    'reportingComponent',
    'source',
    'type',
  ],
  Secret: ['type'],
  Job: ['status.successful'],
};

export function parseFieldSelector(text: string | null, kind: string): Selector {
  if (!text) return () => true;
  const allowed = new Set(['metadata.name', 'metadata.namespace', ...(FIELDS[kind] ?? [])]);
  const requirements = text.split(',').map((raw) => {
    const match = /^\s*([\w.]+)\s*(==|=|!=)\s*(.*?)\s*$/.exec(raw);
    if (!match) throw badRequest(`invalid selector: '${text}'; can't understand '${raw}'`);
    const [, field, operator, value] = match as unknown as [string, string, string, string];
    if (!allowed.has(field)) throw badRequest(`field label not supported: ${field}`);
    return (object: KubeObjectLike) => {
      const actual = fieldValue(object, field);
      return operator === '!=' ? actual !== value : actual === value;
    };
  });
  return (object) => requirements.every((requirement) => requirement(object));
}

function fieldValue(object: KubeObjectLike, field: string): string {
  // An Event's `source` selects on its component.
  const path = field === 'source' ? ['source', 'component'] : field.split('.');
  let value: unknown = object;
  for (const key of path) value = (value as Record<string, unknown> | undefined)?.[key];
  return value === undefined || value === null ? '' : String(value);
}
