import { createHash } from 'node:crypto';
import pg from 'pg';
import { endSpan, inRecordedSpan, type Span, SpanKind, startChildSpan, tracingOn } from '../tracing.js';

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
  /** The transaction open on this connection (between BEGIN and COMMIT or ROLLBACK), for its database span. */
  transaction: TransactionTrace | undefined;
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
  const client = this as PreparingClient;
  // Looked up on each call, so that wrappers of pg.Client.prototype.query (the benchmark's counter) still apply.
  const plainQuery = pg.Client.prototype.query as unknown as Query;
  const [text, values] = args;
  const parameterised = typeof text === 'string' && args.length === 2 && Array.isArray(values) && values.length > 0;
  const name = parameterised ? statementName(client, text) : undefined;
  const trace = typeof text === 'string' && tracingOn() ? traceStatement(client, text, parameterised) : undefined;
  const result = name === undefined ? plainQuery.apply(this, args) : plainQuery.call(this, { name, text, values });
  if (trace) {
    if (result instanceof Promise)
      result.then(
        () => trace(),
        (error: unknown) => trace(error),
      );
    else trace();
  }
  return result;
};

/**
 * Database spans, one per transaction and one per statement made outside a transaction, inside a trace (a
 * request, a run's execution); statements outside any trace get none. A transaction's statements are counted on
 * its span rather than each making one: spans cost the server (and the collector) about the same whatever they
 * hold, and a transaction, which holds its connection from BEGIN to COMMIT, is the unit whose time matters.
 * Returns what to call when the statement settles, or undefined when it makes no span.
 */
function traceStatement(client: PreparingClient, text: string, parameterised: boolean): Settle | undefined {
  const open = client.transaction;
  if (open) {
    if (TRANSACTION_END.test(text)) {
      client.transaction = undefined;
      return open.span && ((error) => endTransaction(open, text, error));
    }
    if (!open.span) return undefined;
    open.statements++;
    if (open.operations.length < MAX_OPERATIONS) open.operations.push(statementShape(text, parameterised).operation);
    return (error) => {
      // The failed statement's text goes on the transaction's span (parameterised texts only: others may hold
      // literals), with the error; the ROLLBACK that follows ends the span.
      if (error === undefined || !open.span) return;
      open.failed = true;
      open.span.recordException(error instanceof Error ? error : String(error));
      if (parameterised)
        open.span.setAttribute('db.query.text', statementShape(text, true).attributes['db.query.text']!);
    };
  }
  if (TRANSACTION_BEGIN.test(text)) {
    // A transaction begun outside any trace is tracked all the same, so that its statements make no spans either.
    const transaction: TransactionTrace = {
      span: startChildSpan('db transaction', { kind: SpanKind.CLIENT, attributes: TRANSACTION_ATTRIBUTES }),
      statements: 0,
      operations: [],
      failed: false,
    };
    client.transaction = transaction;
    // A BEGIN that fails opens nothing.
    return (error) => {
      if (error === undefined) return;
      if (client.transaction === transaction) client.transaction = undefined;
      endSpan(transaction.span, error);
    };
  }
  // Most statements outside a transaction are the engine's, outside any trace: they skip the shape's work.
  if (!inRecordedSpan()) return undefined;
  const { operation, attributes } = statementShape(text, parameterised);
  const span = startChildSpan(`db ${operation}`, { kind: SpanKind.CLIENT, attributes });
  return span && ((error) => endSpan(span, error));
}

type Settle = (error?: unknown) => void;

interface TransactionTrace {
  span: Span | undefined;
  /** Statements between BEGIN and its end. */
  statements: number;
  /** Their operations in order (the first MAX_OPERATIONS). */
  operations: string[];
  /** Whether one of them failed (the transaction's span is then an error, whatever ends it). */
  failed: boolean;
}

const TRANSACTION_BEGIN = /^\s*(begin|start\s+transaction)\b/i;
/** COMMIT, END, ROLLBACK or ABORT; not ROLLBACK TO SAVEPOINT, which stays inside the transaction. */
const TRANSACTION_END = /^\s*(commit|end|rollback|abort)\b(?!\s+to\b)/i;
const MAX_OPERATIONS = 32;
const TRANSACTION_ATTRIBUTES = { 'db.system.name': 'postgresql', 'db.operation.name': 'TRANSACTION' } as const;

function endTransaction(transaction: TransactionTrace, text: string, error: unknown): void {
  const { span } = transaction;
  if (!span) return;
  const outcome = /^\s*(commit|end)\b/i.test(text) ? 'commit' : 'rollback';
  span.setAttributes({
    'hangar.db.statements': transaction.statements,
    'hangar.db.operations': transaction.operations.join(' '),
    'hangar.db.transaction.outcome': outcome,
  });
  if (error !== undefined) endSpan(span, error);
  else if (transaction.failed) endSpan(span, new Error(`the transaction's statement failed (${outcome})`));
  else endSpan(span);
}

interface StatementShape {
  operation: string;
  attributes: Readonly<Record<string, string>>;
}

/** Shapes of parameterised texts, which are few (the prepared statements' texts): worked out once each. */
const shapes = new Map<string, StatementShape>();
const MAX_SHAPES = 1000;

/**
 * A statement's operation (its first word) and its span's attributes. A parameterised text holds no values, so it
 * is recorded whole; any other text only by its first word, as it may hold literals.
 */
function statementShape(text: string, parameterised: boolean): StatementShape {
  const known = parameterised ? shapes.get(text) : undefined;
  if (known) return known;
  const operation = /^\s*(\w+)/.exec(text)?.[1]?.toUpperCase() ?? 'QUERY';
  const shape: StatementShape = {
    operation,
    attributes: {
      'db.system.name': 'postgresql',
      'db.operation.name': operation,
      ...(parameterised ? { 'db.query.text': text.length > 2000 ? `${text.slice(0, 2000)}...` : text } : {}),
    },
  };
  if (parameterised && shapes.size < MAX_SHAPES) shapes.set(text, shape);
  return shape;
}
