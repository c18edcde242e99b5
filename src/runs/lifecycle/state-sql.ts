import { type RawBuilder, sql } from 'kysely';
import type { RunState } from './states.js';

/**
 * A group of states as SQL literals, `'PENDING', 'CLAIMED'`: the statement text stays the same as when they were
 * written out (parameters would keep the planner from matching the partial indexes on state).
 */
export function stateList(states: readonly RunState[]): RawBuilder<unknown> {
  return sql.raw(states.map((state) => `'${state}'`).join(', '));
}
