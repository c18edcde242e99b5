import { createHash } from 'node:crypto';
import pg from 'pg';
import { endSpan, SpanKind, startChildSpan } from '../tracing.js';

/**
 * Sends parameterised statements as named prepared statements, named after their text: PostgreSQL then parses
 * and plans each text once per connection instead of on every call. Measured here: the engine's transition
 * statement 0.9 ms prepared against 1.9 ms unnamed; the runs list and create queries about halve PostgreSQL's
 * CPU per request (bench/RESULTS.md).
 *
 * Each connection keeps the statements it prepared until it closes, so the number of texts is bounded: past
 * MAX_PREPARED_PER_CONNECTION distinct texts on one connection, new texts go unnamed as before. Queries are built
 * with `= ANY($1)` rather than `IN ($1, $2, ...)` where a list varies, so one text serves every length.
 */
export const MAX_PREPARED_PER_CONNECTION = 200;

type Query = (this: pg.Client, ...args: unknown[]) => unknown;

export class PreparingClient extends pg.Client {
  /** The statement names this connection has prepared (or is preparing), by text. */
  readonly preparedNames = new Map<string, string>();
}

function statementName(client: PreparingClient, text: string): string | undefined {
  let name = client.preparedNames.get(text);
  if (name === undefined && client.preparedNames.size < MAX_PREPARED_PER_CONNECTION) {
    name = `h${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
    client.preparedNames.set(text, name);
  }
  return name;
}

// The override goes on the prototype: pg's query() has many overloads, and only its (text, values) form changes.
(PreparingClient.prototype as unknown as { query: Query }).query = function (this: pg.Client, ...args: unknown[]) {
  // Looked up on each call, so that wrappers of pg.Client.prototype.query (the benchmark's counter) still apply.
  const plainQuery = pg.Client.prototype.query as unknown as Query;
  const [text, values] = args;
  const parameterised = typeof text === 'string' && args.length === 2 && Array.isArray(values) && values.length > 0;
  const name = parameterised ? statementName(this as PreparingClient, text) : undefined;
  const span = typeof text === 'string' ? statementSpan(text, parameterised) : undefined;
  const result = name === undefined ? plainQuery.apply(this, args) : plainQuery.call(this, { name, text, values });
  if (span) {
    if (result instanceof Promise)
      result.then(
        () => endSpan(span),
        (error: unknown) => endSpan(span, error),
      );
    else endSpan(span);
  }
  return result;
};

/**
 * A database span for a statement made inside a trace (a request, a run's execution). A parameterised text holds
 * no values, so it is recorded whole; any other text only by its first word, as it may hold literals.
 */
function statementSpan(text: string, parameterised: boolean) {
  const operation = /^\s*(\w+)/.exec(text)?.[1]?.toUpperCase() ?? 'QUERY';
  return startChildSpan(`db ${operation}`, {
    kind: SpanKind.CLIENT,
    attributes: {
      'db.system.name': 'postgresql',
      'db.operation.name': operation,
      ...(parameterised ? { 'db.query.text': text.length > 2000 ? `${text.slice(0, 2000)}...` : text } : {}),
    },
  });
}
