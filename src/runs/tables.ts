import type { ColumnType, Generated } from 'kysely';
import type { Json, NullableJson, NullableTimestamp, Timestamp } from '../platform/db/columns.js';

/** The runs slice's tables, as Kysely sees them (migrations 0001, 0007 and later). Keep them in step with the SQL. */

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
  /** The usage of the run's earlier executions, summed (migration 0030): request_usage is this plus the current one's. */
  usage_before: NullableJson<Record<string, unknown>>;
  /** The execution whose agent its engine was about to start (migration 0043, runs/lifecycle/start-intents.ts). */
  agent_start_intent: number | null;
  session_id: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  started_at: NullableTimestamp;
  ended_at: NullableTimestamp;
  /** The first claim: the end of the run's queue wait (migration 0039, kept by hangar_run_times). */
  claimed_at: NullableTimestamp;
  /** When this execution's agent started; NULL between executions (migration 0039). */
  agent_started_at: NullableTimestamp;
  /** The agent time of the run's executions that ended, in seconds; NULL until an agent worked (migration 0039). */
  agent_seconds: number | null;
  execution_id: Generated<number>;
  harness: string | null;
  lease_owner: string | null;
  lease_expires_at: NullableTimestamp;
  sandbox_running: Generated<boolean>;
  debug_session: NullableJson<{ owner: string; workspace: string; until: string }>;
  search_text: ColumnType<string, never, never>;
  attachment_count: Generated<number>;
  /** The traceparent of what created the run, with tracing on (migration 0021). */
  trace_parent: string | null;
  /** The top of the run's tree of parent runs; its own id for a top-level run (migration 0048). */
  root_run_id: string | null;
  /** The automation that fired the run (migration 0048). */
  automation_id: string | null;
  /** The factory of the automation that fired it or of the agent that executes it (migration 0048). */
  factory_uid: string | null;
  /** What triggered it: an absolute URL, or a path under the public URL (migration 0048, render.ts). */
  trigger_url: string | null;
  /** Generated from request_usage (migration 0020), for the overview's covering index. */
  inference_cost: ColumnType<number | null, never, never>;
  /** Generated from status_message (migration 0020), for the overview's covering index. */
  error_code: ColumnType<string | null, never, never>;
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

/** Idempotency-Key of run creates (migration 0017): the first answer per team and key, for 24 hours. */
export interface RunIdempotencyKeysTable {
  team_uid: string;
  idempotency_key: string;
  /** SHA-256 (hex) of the sender and the body of the request that used the key first. */
  request_hash: string;
  answer: Json<{ run_id: string; task_id: string; state: string; at_capacity?: boolean }>;
  created_at: Timestamp;
}

/** A run's share links (migration 0047, runs/sharing/): only the SHA-256 of each link's secret is kept. */
export interface RunShareLinksTable {
  id: string;
  run_id: string;
  team_uid: string;
  public_access: 'VIEWER' | 'EDITOR';
  secret_hash: string;
  created_by_type: string;
  created_by_uid: string;
  created_at: Generated<Date>;
  revoked_at: Date | null;
  revoked_by_uid: string | null;
}

/** The runs slice's tables (src/database.ts composes every slice's into DB). */
export interface RunsTables {
  runs: RunsTable;
  run_attachments: RunAttachmentsTable;
  run_events: RunEventsTable;
  run_inputs: RunInputsTable;
  run_transcript: RunTranscriptTable;
  run_idempotency_keys: RunIdempotencyKeysTable;
  run_share_links: RunShareLinksTable;
}
