/** PostgreSQL's SQLSTATE of a failed statement (the same on pg and PGlite), for example 23505 unique_violation. */
export function sqlState(error: unknown): unknown {
  return (error as { code?: unknown } | null)?.code;
}

export const UNIQUE_VIOLATION = '23505';
export const FOREIGN_KEY_VIOLATION = '23503';

/**
 * SQLSTATEs of a database that is going away or not there yet: 57P01 admin_shutdown (a fast shutdown or
 * pg_terminate_backend), 57P02 crash_shutdown, 57P03 cannot_connect_now (starting up, shutting down, recovering),
 * 53300 too_many_connections.
 */
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300']);

/** Socket errors of a connection that could not be made or broke (the server is down, restarting, or unreachable). */
const UNAVAILABLE_SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * The messages node-postgres and its pool throw without a code: the server closed the connection mid-query (a
 * restart, a crash, an immediate shutdown), a client already broken, and waiting too long for a connection.
 */
const UNAVAILABLE_MESSAGES = [
  'Connection terminated unexpectedly',
  'Connection terminated due to connection timeout',
  'Client has encountered a connection error and is not queryable',
  'timeout exceeded when trying to connect',
  'Client was closed and is not queryable',
];

/**
 * Whether a failure means the database could not be reached or dropped the connection, rather than that the
 * statement was refused: worth retrying as it is once the database is back (HTTP 503, the engine's writes). Class
 * 08 (connection_exception) is the SQL standard's own name for it.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = sqlState(error);
  if (typeof code === 'string' && (code.startsWith('08') || UNAVAILABLE_SQLSTATES.has(code))) return true;
  if (typeof code === 'string' && UNAVAILABLE_SOCKET_CODES.has(code)) return true;
  if (UNAVAILABLE_MESSAGES.some((message) => error.message.includes(message))) return true;
  // A pool connect refused on every address arrives as an AggregateError of socket errors.
  if (error instanceof AggregateError) return error.errors.length > 0 && error.errors.every(isDatabaseUnavailable);
  return false;
}
