import type { Generated } from 'kysely';
import type { NullableTimestamp, Timestamp } from '../platform/db/columns.js';

/** The execution slice's tables, as Kysely sees them (migration 0018). Keep them in step with the SQL. */

/** An engine alive, or gone with runs still to take back (src/execution/engine/presence.ts). */
export interface EnginesTable {
  id: string;
  /** When it last took its session lock (PostgreSQL); null on PGlite. */
  locked_at: NullableTimestamp;
  heartbeat_at: Generated<Timestamp>;
}

/** The execution slice's tables (src/database.ts composes every slice's into DB). */
export interface ExecutionTables {
  engines: EnginesTable;
}
