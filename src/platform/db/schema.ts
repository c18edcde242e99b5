import type { ColumnType, Generated } from 'kysely';

/** Kysely's view of the tables created by the SQL migrations in ./migrations. Keep the two in step. */

type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
type Json<T> = ColumnType<T, string, string>;
type NullableJson<T> = ColumnType<T | null, string | null | undefined, string | null>;

export interface InstanceSettingsTable {
  key: string;
  /** A plain setting; null for an encrypted one. */
  value: string | null;
  iv: Buffer | null;
  auth_tag: Buffer | null;
  ciphertext: Buffer | null;
}

export interface TeamsTable {
  uid: string;
  name: string;
  created_at: Timestamp;
}

export interface UsersTable {
  uid: string;
  display_name: string;
  email: string | null;
  is_admin: Generated<boolean>;
  created_at: Timestamp;
}

export interface TeamMembersTable {
  team_uid: string;
  user_uid: string;
  role: 'admin' | 'member';
  created_at: Timestamp;
}

export interface ApiKeysTable {
  uid: string;
  key_hash: string;
  display_prefix: string;
  name: string;
  /** Exactly one of user_uid and agent_uid is set. */
  user_uid: string | null;
  agent_uid: string | null;
  created_at: Timestamp;
  revoked_at: NullableTimestamp;
}

export interface EnvironmentsTable {
  uid: string;
  team_uid: string;
  config: Json<Record<string, unknown>>;
  created_at: Timestamp;
  updated_at: Timestamp;
  creator_type: 'user' | 'service_account' | null;
  creator_uid: string | null;
  setup_failed: Generated<boolean>;
  share_token_hash: string | null;
}

export interface EnvironmentAccessTable {
  environment_uid: string;
  team_uid: string;
  via: 'guest' | 'link';
  created_at: Timestamp;
}

export interface AgentIdentitiesTable {
  uid: string;
  team_uid: string;
  name: string;
  description: string | null;
  prompt: string | null;
  environment_id: string | null;
  base_model: string | null;
  worker_host: string | null;
  skills: ColumnType<string[], string | undefined, string>;
  secrets: ColumnType<Array<{ name: string }>, string | undefined, string>;
  mcp_servers: NullableJson<Record<string, unknown>>;
  harness: NullableJson<Record<string, unknown>>;
  created_by_uid: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  /** Set when a factory definition manages the agent. */
  factory_uid: Generated<string | null>;
}

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

export interface ArtifactsTable {
  uid: string;
  run_id: string;
  team_uid: string;
  artifact_type: string;
  data: Json<Record<string, unknown>>;
  is_public: Generated<boolean>;
  created_at: Timestamp;
  execution_id: number | null;
  blob_key: string | null;
  content_type: string | null;
  size_bytes: string | null;
  canonical_url: string | null;
}

export interface ScorersTable {
  id: Generated<number>;
  team_uid: string;
  name: string;
  rubric: string;
  labels: Json<Array<{ label: string; score: number }>>;
  passing_score: number;
  created_at: Timestamp;
}

export interface RunScoresTable {
  scored_run_id: string;
  scorer_id: number;
  judge_run_id: string;
  classification: string;
  score: number;
  passed: boolean;
  reason: string;
  failed: boolean;
  created_at: Timestamp;
}

export interface SchedulesTable {
  id: string;
  team_uid: string;
  name: string;
  cron_schedule: string;
  prompt: string;
  enabled: boolean;
  agent_config: NullableJson<Record<string, unknown>>;
  agent_uid: string | null;
  metadata: Json<Record<string, string>>;
  scope_type: 'User' | 'Team';
  scope_uid: string;
  created_by_uid: string;
  updated_by_uid: string;
  created_at: Timestamp;
  updated_at: Timestamp;
  next_run_at: NullableTimestamp;
  last_ran_at: NullableTimestamp;
  last_spawn_error: string | null;
  /** Set on the schedules of an automation's cron triggers; the schedules API shows only the others. */
  automation_id: Generated<string | null>;
}

/** A team secret: AES-256-GCM ciphertext only (see src/platform/crypto.ts). */
export interface AuthFailureWindowsTable {
  client: string;
  window_start: Timestamp;
  shard: number;
  count: number;
}

export interface SecretGrantsTable {
  team_uid: string;
  secret_name: string;
  grantee_type: 'member' | 'agent' | 'environment';
  grantee_uid: string;
  created_at: Timestamp;
}

export interface SecretsTable {
  team_uid: string;
  name: string;
  iv: Buffer;
  auth_tag: Buffer;
  ciphertext: Buffer;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface McpServersTable {
  uid: string;
  team_uid: string;
  name: string;
  /** {command, args, env} or {url, headers}; secret values appear only as {secret: name} references. */
  definition: Json<Record<string, unknown>>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface McpServerSharesTable {
  server_uid: string;
  team_uid: string;
  created_at: Timestamp;
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

export interface FactoriesTable {
  uid: string;
  team_uid: string;
  name: string;
  is_default: Generated<boolean>;
  description: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface FactorySkillsTable {
  factory_uid: string;
  team_uid: string;
  name: string;
  description: string;
  prompt: string;
  updated_at: Timestamp;
}

export type WebhookAuthMode = 'token' | 'url_token' | 'signature';

export interface WebhooksTable {
  uid: string;
  team_uid: string;
  factory_uid: string;
  name: string;
  auth_mode: WebhookAuthMode;
  signature_scheme: string | null;
  secret_iv: Buffer | null;
  secret_auth_tag: Buffer | null;
  secret_ciphertext: Buffer | null;
  secret_name: string | null;
  delivery_id_header: string | null;
  enabled: Generated<boolean>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export type DeliveryStatus =
  | 'Accepted'
  | 'Duplicate'
  | 'Rejected (auth)'
  | 'Rejected (invalid JSON)'
  | 'Rejected (too large)';

export interface WebhookDeliveriesTable {
  seq: ColumnType<string, never, never>;
  webhook_uid: string;
  delivery_id: string;
  status: DeliveryStatus;
  size_bytes: number;
  received_at: Timestamp;
  body: string | null;
  evaluated_at: NullableTimestamp;
  /** Signed deliveries: the hash of what the signature covers, which decides duplicates (not delivery_id). */
  replay_key: string | null;
}

export interface WebhookReplayKeysTable {
  webhook_uid: string;
  replay_key: string;
  first_seen_at: Timestamp;
  /** NULL: kept for good (schemes without a signed timestamp). */
  expires_at: NullableTimestamp;
}

export interface WebhookRateWindowsTable {
  webhook_uid: string;
  sender: string;
  kind: string;
  window_start: Timestamp;
  shard: number;
  count: number;
}

export interface AutomationsTable {
  id: string;
  team_uid: string;
  factory_uid: string;
  name: string;
  prompt: string;
  enabled: boolean;
  agent_uid: string | null;
  agent_config: NullableJson<Record<string, unknown>>;
  triggers: Json<unknown[]>;
  webhook_uids: ColumnType<string[], string[] | undefined, string[]>;
  created_by_uid: string;
  updated_by_uid: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface AutomationFiringsTable {
  delivery_seq: string;
  automation_id: string;
  run_id: string | null;
  error: string | null;
}

export interface DB {
  instance_settings: InstanceSettingsTable;
  secret_grants: SecretGrantsTable;
  auth_failure_windows: AuthFailureWindowsTable;
  teams: TeamsTable;
  users: UsersTable;
  team_members: TeamMembersTable;
  api_keys: ApiKeysTable;
  environments: EnvironmentsTable;
  environment_access: EnvironmentAccessTable;
  agent_identities: AgentIdentitiesTable;
  runs: RunsTable;
  run_attachments: RunAttachmentsTable;
  run_events: RunEventsTable;
  run_inputs: RunInputsTable;
  run_transcript: RunTranscriptTable;
  artifacts: ArtifactsTable;
  scorers: ScorersTable;
  run_scores: RunScoresTable;
  schedules: SchedulesTable;
  secrets: SecretsTable;
  mcp_servers: McpServersTable;
  mcp_server_shares: McpServerSharesTable;
  worker_connections: WorkerConnectionsTable;
  worker_skills: WorkerSkillsTable;
  worker_keys: WorkerKeysTable;
  factories: FactoriesTable;
  factory_skills: FactorySkillsTable;
  webhooks: WebhooksTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_rate_windows: WebhookRateWindowsTable;
  webhook_replay_keys: WebhookReplayKeysTable;
  automations: AutomationsTable;
  automation_firings: AutomationFiringsTable;
}
