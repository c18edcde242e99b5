import type { FastifyError } from 'fastify';

/**
 * One validation error of a request, in people's words: which parameter or field, what it must be, and what was
 * sent. Ajv's own messages ("must be equal to constant", a regular expression) name neither the values allowed
 * nor the form expected; the schema the error carries (the validator runs with `verbose`) says both.
 */

/** An Ajv error as Fastify hands it on, with what `verbose` adds. */
interface SchemaError {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message?: string;
  schema?: unknown;
  parentSchema?: Record<string, unknown>;
  data?: unknown;
}

/**
 * The schema keyword that says, in words, what a `pattern` allows: "1-128 letters, digits, _ . or -, starting with
 * a letter or _". An OpenAPI extension, so the published schema carries it too.
 */
export const PATTERN_IN_WORDS = 'x-pattern-in-words';

const PART_NAMES: Record<string, string> = {
  querystring: 'query parameter',
  body: 'field',
  params: 'path parameter',
  headers: 'header',
};

/** `state.0` is the query parameter `state` (a repeated parameter is an array); a body's `repos/1/owner` is `repos[1].owner`. */
function fieldName(path: string, part: string): string {
  const segments = path.split('/').filter(Boolean);
  if (part !== 'body') return segments.filter((segment) => !/^\d+$/.test(segment)).join('.');
  return segments
    .map((segment, index) => (/^\d+$/.test(segment) ? `[${segment}]` : `${index ? '.' : ''}${segment}`))
    .join('');
}

/** The value sent, quoted, when it is short enough to repeat. */
function sent(value: unknown): string {
  if (value === undefined || (typeof value === 'object' && value !== null)) return '';
  const text = JSON.stringify(value);
  return text.length <= 80 ? ` (got ${text})` : '';
}

/** The values a union of constants (TypeBox's literal unions) allows, or null when it is another kind of anyOf. */
function literals(branches: unknown): unknown[] | null {
  if (!Array.isArray(branches)) return null;
  const values = branches.map((branch) => (branch as { const?: unknown } | null)?.const);
  return values.every((value) => value !== undefined) ? values : null;
}

function oneOfValues(values: unknown[], data: unknown): string {
  const list = values.map((value) => String(value)).join(', ');
  const near =
    typeof data === 'string' ? values.find((value) => String(value).toLowerCase() === data.toLowerCase()) : undefined;
  return `must be one of ${list}${sent(data)}${near !== undefined ? `; values are case-sensitive: did you mean ${near}?` : ''}`;
}

const TYPE_WORDS: Record<string, string> = {
  string: 'text',
  integer: 'a whole number',
  number: 'a number',
  boolean: 'true or false',
  object: 'an object',
  array: 'a list',
  null: 'null',
};

const FORMAT_WORDS: Record<string, string> = {
  'date-time': 'a date and time such as 2026-01-31T09:00:00Z',
  date: 'a date such as 2026-01-31',
  uri: 'an absolute URL',
  url: 'an absolute URL',
  email: 'an email address',
  uuid: 'a UUID',
};

/** What the value must be, for the keywords people meet; Ajv's message for the rest. */
function requirement(error: SchemaError): string {
  const { params } = error;
  switch (error.keyword) {
    case 'enum':
      return oneOfValues(params.allowedValues as unknown[], error.data);
    case 'const':
      return `must be ${String(params.allowedValue)}${sent(error.data)}`;
    case 'pattern': {
      const words = error.parentSchema?.[PATTERN_IN_WORDS];
      return `${typeof words === 'string' ? `must be ${words}` : 'is not in the form this field takes'}${sent(error.data)}`;
    }
    case 'format':
      return `must be ${FORMAT_WORDS[String(params.format)] ?? `in the format ${String(params.format)}`}${sent(error.data)}`;
    case 'type': {
      const types = String(params.type).split(',');
      return `must be ${types.map((type) => TYPE_WORDS[type] ?? type).join(' or ')}${sent(error.data)}`;
    }
    case 'minLength':
      return params.limit === 1 ? 'must not be empty' : `must be at least ${params.limit} characters long`;
    case 'maxLength':
      return `must be at most ${params.limit} characters long`;
    case 'minimum':
      return `must be at least ${params.limit}${sent(error.data)}`;
    case 'maximum':
      return `must be at most ${params.limit}${sent(error.data)}`;
    case 'minItems':
      return `must list at least ${params.limit} item${params.limit === 1 ? '' : 's'}`;
    case 'maxItems':
      return `must list at most ${params.limit} items`;
    default:
      return `${error.message ?? 'is invalid'}${sent(error.data)}`;
  }
}

/**
 * The first error, except that a union of constants fails as one `const` error per value and then an `anyOf`:
 * that `anyOf`, which knows every value, stands for them all.
 */
function chosen(all: SchemaError[]): SchemaError | undefined {
  // A union of shapes (`true` or an object of lists) fails in every branch; the branch that got deepest into the
  // value is the one the caller meant, and its error the one worth saying.
  const depth = (error: SchemaError) => error.instancePath.split('/').length;
  const deepest = Math.max(...all.map(depth));
  const errors = all[0] && depth(all[0]) < deepest ? all.filter((error) => depth(error) === deepest) : all;
  // At one depth, a branch whose type matched (an unknown member of the object) says more than one that did not.
  const matched = errors.find((error) => !['type', 'const', 'anyOf'].includes(error.keyword));
  const first = errors[0]?.keyword === 'type' && matched ? matched : errors[0];
  if (first?.keyword !== 'const') return first;
  const union = errors.find(
    (error) => error.keyword === 'anyOf' && error.instancePath === first.instancePath && literals(error.schema),
  );
  return union ?? first;
}

export function describeValidation(error: FastifyError): string {
  const first = chosen((error.validation ?? []) as SchemaError[]);
  if (!first) return error.message;
  const part = error.validationContext ?? 'request';
  const noun = PART_NAMES[part] ?? part;
  const params = first.params;
  if (typeof params.missingProperty === 'string')
    return `required ${noun} "${fieldName(`${first.instancePath}/${params.missingProperty}`, part)}" is missing`;
  if (typeof params.additionalProperty === 'string')
    return `unknown ${noun} "${fieldName(`${first.instancePath}/${params.additionalProperty}`, part)}"`;
  const name = fieldName(first.instancePath, part);
  const what =
    first.keyword === 'anyOf' && literals(first.schema)
      ? oneOfValues(literals(first.schema)!, first.data)
      : requirement(first);
  return name ? `${noun} "${name}" ${what}` : `the ${part === 'body' ? 'request body' : part} ${what}`;
}
