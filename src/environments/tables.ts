import type { ColumnType, Generated } from 'kysely';
import type { Json, NullableTimestamp, Timestamp } from '../platform/db/columns.js';

export interface EnvironmentsTable {
  uid: string;
  team_uid: string;
  config: Json<Record<string, unknown>>;
  created_at: Timestamp;
  updated_at: Timestamp;
  creator_type: 'user' | 'service_account' | null;
  creator_uid: string | null;
  /** Who last changed its config (migration 0046); its creator until someone does. */
  last_editor_type: 'user' | 'service_account' | null;
  last_editor_uid: string | null;
  setup_failed: Generated<boolean>;
  share_token_hash: string | null;
}

export interface EnvironmentAccessTable {
  environment_uid: string;
  team_uid: string;
  via: 'guest' | 'link';
  created_at: Timestamp;
  /** When the guest team's admin let its runs in the environment use the team's secrets; null: they may not. */
  secrets_allowed_at: NullableTimestamp;
  /** The admin who did (a principal uid). */
  secrets_allowed_by: string | null;
}

export interface EnvironmentSnapshotsTable {
  id: string;
  environment_uid: string;
  team_uid: string;
  key: string;
  base_key: string;
  commits: Json<Record<string, string>>;
  state: Generated<'creating' | 'ready'>;
  size_bytes: ColumnType<string | number, number | undefined, number>;
  created_at: Timestamp;
  last_used_at: Timestamp;
}

/** The environments slice's tables, as Kysely sees them (src/database.ts composes every slice's into DB). */
export interface EnvironmentsTables {
  environments: EnvironmentsTable;
  environment_access: EnvironmentAccessTable;
  environment_snapshots: EnvironmentSnapshotsTable;
}
