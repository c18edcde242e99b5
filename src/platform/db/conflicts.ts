import type { ApiError } from '../http/errors.js';
import { sqlState, UNIQUE_VIOLATION } from './sql-state.js';

/** The 409 that a unique constraint (by its PostgreSQL name) stands for; the slice that owns the table words it. */
export type ConstraintConflicts = Record<string, () => ApiError>;

/** The constraint a failed statement violated (pg and PGlite both report it). */
function violatedConstraint(error: unknown): string | undefined {
  if (sqlState(error) !== UNIQUE_VIOLATION) return undefined;
  const constraint = (error as { constraint?: unknown }).constraint;
  return typeof constraint === 'string' ? constraint : undefined;
}

/**
 * Awaits a write and turns a unique violation of one of the named constraints into that constraint's 409; any
 * other error goes through unchanged. The constraint decides, not a read before the write, so two concurrent
 * writers cannot both pass. Inside a transaction the violation has aborted it: let the 409 leave the transaction.
 */
export async function withConflicts<T>(write: Promise<T>, conflicts: ConstraintConflicts): Promise<T> {
  try {
    return await write;
  } catch (error) {
    const constraint = violatedConstraint(error);
    // Own keys only: a constraint named like an Object method must not find that method.
    const conflict =
      constraint !== undefined && Object.hasOwn(conflicts, constraint) ? conflicts[constraint] : undefined;
    throw conflict ? conflict() : error;
  }
}
