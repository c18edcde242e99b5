/** PostgreSQL's SQLSTATE of a failed statement (the same on pg and PGlite), for example 23505 unique_violation. */
export function sqlState(error: unknown): unknown {
  return (error as { code?: unknown } | null)?.code;
}

export const UNIQUE_VIOLATION = '23505';
export const FOREIGN_KEY_VIOLATION = '23503';
