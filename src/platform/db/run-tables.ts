import type { ColumnType, Generated } from 'kysely';
import type { Timestamp, NullableTimestamp, Json, NullableJson } from './columns.js';

/**
 * The runs, execution and workers tables, until the run lifecycle move declares them in those slices (then this
 * file goes). Keep them in step with the SQL migrations in ./migrations.
 */

export interface RunsTable {
  id: string;
  team_uid: string;
  title: string;
  prompt: string;
  state: string;
  source: string;
  execution_location: string;
  mode: Generated<string>;
  scope_type: 'User' | 'Team';
  scope_uid: string;
  agent_config: Json<Record<string, unknown>>;
  config_name: string | null;
  model_id: string | null;
  skill_spec: string | null;
  agent_skill: NullableJson<{ name: string; description: string; full_path: string }>;
  environment_id: string | null;
  worker_host: string | null;
  schedule: NullableJson<{ schedule_id: string; schedule_name: string; cron_schedule: string }>;
  schedule_id: string | null;
  schedule_tick: NullableTimestamp;
  parent_run_id: string | null;
  conversation_id: string | null;
  creator_type: 'user' | 'service_account';
  creator_uid: string;
  executor_type: 'user' | 'service_account';
  executor_uid: string;
  metadata: Json<Record<string, string>>;
  interactive: Generated<boolean>;
  status_message: NullableJson<Record<string, unknown>>;
  request_usage: NullableJson<Record<string, unknown>>;
  session_id: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  started_at: NullableTimestamp;
  ended_at: NullableTimestamp;
  execution_id: Generated<number>;
  harness: string | null;
  lease_owner: string | null;
  lease_expires_at: NullableTimestamp;
  sandbox_running: Generated<boolean>;
  debug_session: NullableJson<{ owner: string; workspace: string; until: string }>;
  search_text: ColumnType<string, never, never>;
  attachment_count: Generated<number>;
}

export interface RunAttachmentsTable {
  run_id: string;
  position: number;
  file_name: string;
  mime_type: string;
  data: Buffer;
}

export interface RunEventsTable {
  event_uuid: string;
  seq: ColumnType<string, never, never>;
  run_id: string;
  execution_id: string | null;
  event_type: string;
  occurred_at: Timestamp;
  payload: NullableJson<Record<string, unknown>>;
}

export interface RunInputsTable {
  seq: ColumnType<string, never, never>;
  run_id: string;
  execution_id: number;
  purpose: Generated<'agent' | 'debug'>;
  message: string;
  mode: string | null;
  created_at: Timestamp;
  delivered_at: NullableTimestamp;
}

export interface RunTranscriptTable {
  seq: ColumnType<string, never, never>;
  run_id: string;
  execution_id: number;
  stream: 'input' | 'output';
  line: string;
  at: Timestamp;
}

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
