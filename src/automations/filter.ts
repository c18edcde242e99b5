/**
 * Payload filters of webhook automations: a JSON object mirroring the body shape, where every key names a
 * payload field and all of them must match. A field's condition is a scalar (equality), an array of scalars
 * (any of), an operator object ({in, not_in, exists}) or a nested filter object that descends into the field.
 * Pure: validated when an automation is saved, evaluated for every delivery.
 */

type Scalar = string | number | boolean | null;
type FilterObject = Record<string, unknown>;
interface Operators {
  in?: Scalar[];
  not_in?: Scalar[];
  exists?: boolean;
}

const OPERATORS = new Set(['in', 'not_in', 'exists']);
const MAX_DEPTH = 10;
const MAX_LEAVES = 64;
const MAX_VALUES = 32;

export interface FilterVerdict {
  matched: boolean;
  /** Human-readable why: the first failing condition, or 'every condition matched' / 'no payload conditions'. */
  reason: string;
}

function isRecord(value: unknown): value is FilterObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

// NaN and Infinity are not JSON, so they are not values a payload can ever hold.
function isScalar(value: unknown): value is Scalar {
  return (
    value === null ||
    typeof value === 'string' ||
    typeof value === 'boolean' ||
    (typeof value === 'number' && Number.isFinite(value))
  );
}

function child(path: string, key: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

/** Compact JSON for messages; never throws, since payloads reach here unchecked. */
function describe(value: unknown): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch {
    // circular structures or BigInt: fall through to a plain description
  }
  text ??= typeof value === 'object' && value !== null ? 'an object' : String(value);
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
}

function oneOf(values: Scalar[]): string {
  return values.length === 1 ? describe(values[0]) : `one of ${describe(values)}`;
}

function operatorKeys(object: FilterObject): string[] {
  return Object.keys(object).filter((key) => OPERATORS.has(key));
}

/** Only meaningful on a validated filter: bare scalars and arrays are shorthand for `in`. */
function asOperators(condition: unknown): Operators | null {
  if (isScalar(condition)) return { in: [condition] };
  if (Array.isArray(condition)) return { in: condition as Scalar[] };
  if (isRecord(condition) && operatorKeys(condition).length > 0) return condition as Operators;
  return null;
}

// ---------------------------------------------------------------------------------------------------------
// Validation

function valueSetProblem(values: unknown, path: string, name: string): string | null {
  if (!Array.isArray(values)) return `${path}: ${name} must be an array of values, not ${describe(values)}`;
  if (values.length === 0) return `${path}: ${name} is empty; list at least one value`;
  if (values.length > MAX_VALUES) return `${path}: ${name} has ${values.length} values; the limit is ${MAX_VALUES}`;
  // findIndex visits the holes of sparse arrays too, so a hole is reported like any other non-scalar.
  const bad = values.findIndex((value) => !isScalar(value));
  if (bad >= 0)
    return `${path}: ${name} may only contain strings, numbers, booleans and null, not ${describe(values[bad])}`;
  return null;
}

function operatorsProblem(ops: FilterObject, path: string): string | null {
  const fieldKeys = Object.keys(ops).filter((key) => !OPERATORS.has(key));
  if (fieldKeys.length > 0) {
    return `${path}: mixes operators (${operatorKeys(ops).join(', ')}) with field keys (${fieldKeys.join(', ')}); put fields in a nested object without operators`;
  }
  for (const name of ['in', 'not_in'] as const) {
    if (Object.hasOwn(ops, name)) {
      const problem = valueSetProblem(ops[name], path, `"${name}"`);
      if (problem) return problem;
    }
  }
  if (Object.hasOwn(ops, 'exists') && typeof ops.exists !== 'boolean')
    return `${path}: "exists" must be true or false, not ${describe(ops.exists)}`;
  const { in: included, not_in: excluded, exists } = ops as Operators;
  const both = included?.find((value) => excluded?.includes(value));
  if (both !== undefined) return `${path}: "in" and "not_in" both list ${describe(both)}`;
  if (exists === false && included) return `${path}: "exists": false contradicts "in", which needs the field present`;
  return null;
}

function objectProblem(filter: FilterObject, path: string, depth: number, leaves: { count: number }): string | null {
  if (depth > MAX_DEPTH) return `${path}: nests deeper than ${MAX_DEPTH} levels`;
  for (const [key, condition] of Object.entries(filter)) {
    const at = child(path, key);
    let problem: string | null = null;
    if (isRecord(condition) && operatorKeys(condition).length === 0) {
      problem = objectProblem(condition, at, depth + 1, leaves);
    } else {
      if (++leaves.count > MAX_LEAVES)
        return `payload: has more than ${MAX_LEAVES} conditions; the limit is ${MAX_LEAVES}`;
      if (isRecord(condition)) problem = operatorsProblem(condition, at);
      else if (Array.isArray(condition)) problem = valueSetProblem(condition, at, 'the value list');
      else if (!isScalar(condition))
        problem = `${at}: a condition must be a string, number, boolean, null, array or object, not ${describe(condition)}`;
    }
    if (problem) return problem;
  }
  return null;
}

/** Validates a filter when an automation is saved. Returns null when valid, else one sentence naming the path. */
export function payloadFilterProblem(filter: unknown): string | null {
  if (!isRecord(filter)) {
    const kind = filter === null ? 'null' : Array.isArray(filter) ? 'an array' : describe(filter);
    return `payload: a filter must be a JSON object, not ${kind}`;
  }
  return objectProblem(filter, 'payload', 1, { count: 0 });
}

// ---------------------------------------------------------------------------------------------------------
// Evaluation: every helper returns the reason the filter fails, or null when it matches.

/** Payload arrays match on any overlap; a scalar matches when it is in the set. Strict equality is JSON equality for scalars. */
function overlap(value: unknown, values: Scalar[]): unknown {
  const candidates = Array.isArray(value) ? value : [value];
  return candidates.find((candidate) => values.includes(candidate as Scalar));
}

function leafFailure(ops: Operators, present: boolean, value: unknown, path: string): string | null {
  if (ops.exists === true && !present) return `${path} is missing`;
  if (ops.exists === false && present) return `${path} is present (${describe(value)}) but must not exist`;
  if (ops.in) {
    if (!present) return `${path} is missing`;
    if (overlap(value, ops.in) === undefined) {
      return Array.isArray(value)
        ? `${path} is ${describe(value)}, which contains none of ${describe(ops.in)}`
        : `${path} is ${describe(value)}, not ${oneOf(ops.in)}`;
    }
  }
  if (ops.not_in && present) {
    const hit = overlap(value, ops.not_in);
    if (hit !== undefined) {
      return Array.isArray(value)
        ? `${path} is ${describe(value)}, which contains excluded ${describe(hit)}`
        : `${path} is ${describe(value)}, which "not_in" excludes`;
    }
  }
  return null;
}

function fieldsFailure(filter: FilterObject, node: FilterObject, path: string): string | null {
  for (const [key, condition] of Object.entries(filter)) {
    const at = child(path, key);
    // Own keys only: a payload field named "constructor" must not find Object.prototype.constructor.
    const present = Object.hasOwn(node, key);
    const value = present ? node[key] : undefined;
    const ops = asOperators(condition);
    const failure = ops
      ? leafFailure(ops, present, value, at)
      : nestedFailure(condition as FilterObject, present, value, at);
    if (failure) return failure;
  }
  return null;
}

/** Arrays match when any object element does; anything else that is not an object has no keys at all. */
function nodeFailure(filter: FilterObject, node: unknown, path: string): string | null {
  if (Array.isArray(node)) {
    let first: string | undefined;
    for (const [index, element] of node.entries()) {
      if (!isRecord(element)) continue;
      const failure = fieldsFailure(filter, element, `${path}[${index}]`);
      if (failure === null) return null;
      first ??= failure;
    }
    if (first !== undefined) return `no element of ${path} matches (first: ${first})`;
  }
  return fieldsFailure(filter, isRecord(node) ? node : {}, path);
}

function nestedFailure(filter: FilterObject, present: boolean, value: unknown, path: string): string | null {
  if (!present) return `${path} is missing`;
  const descendable = isRecord(value) || (Array.isArray(value) && value.some(isRecord));
  if (!descendable) return `${path} is ${describe(value)}, not an object or an array of objects`;
  return nodeFailure(filter, value, path);
}

/** Evaluates a filter against a parsed JSON payload. Never throws; an invalid filter never matches. */
export function evaluatePayloadFilter(filter: unknown, payload: unknown): FilterVerdict {
  const problem = payloadFilterProblem(filter);
  if (problem) return { matched: false, reason: `invalid filter: ${problem}` };
  if (Object.keys(filter as FilterObject).length === 0) return { matched: true, reason: 'no payload conditions' };
  const failure = nodeFailure(filter as FilterObject, payload, 'payload');
  return failure ? { matched: false, reason: failure } : { matched: true, reason: 'every condition matched' };
}
