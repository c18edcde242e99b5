import type { Generated } from 'kysely';
import type { NullableTimestamp, Timestamp } from '../platform/db/columns.js';

/** The workers slice's tables, as Kysely sees them (migrations 0010 and 0015). Keep them in step with the SQL. */

export interface WorkerConnectionsTable {
  id: string;
  team_uid: string;
  worker_host: string;
  replica: string;
  connected_at: Generated<Timestamp>;
  last_seen_at: Generated<Timestamp>;
}

export interface WorkerKeysTable {
  uid: string;
  team_uid: string;
  key_hash: string;
  display_prefix: string;
  name: string;
  /** A worker ID, or a pattern where * stands for any characters. */
  worker_id: string;
  created_by_uid: string | null;
  created_at: Timestamp;
  revoked_at: NullableTimestamp;
}

export interface WorkerSkillsTable {
  team_uid: string;
  worker_host: string;
  skill_path: string;
  name: string;
  description: string;
  base_prompt: string;
  reported_at: Generated<Timestamp>;
}

/** The workers slice's tables (src/database.ts composes every slice's into DB). */
export interface WorkersTables {
  worker_connections: WorkerConnectionsTable;
  worker_keys: WorkerKeysTable;
  worker_skills: WorkerSkillsTable;
}
