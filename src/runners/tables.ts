import type { Generated } from 'kysely';
import type { Json, Timestamp } from '../platform/db/columns.js';

export interface RunnersTable {
  uid: string;
  team_uid: string;
  name: string;
  description: Generated<string>;
  /** {sandbox?, limits?, kubernetes?} as the API checked it (shape.ts). */
  shape: Json<Record<string, unknown>>;
  factory_uid: Generated<string | null>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** The runners slice's tables, as Kysely sees them (src/database.ts composes every slice's into DB). */
export interface RunnersTables {
  runners: RunnersTable;
}
