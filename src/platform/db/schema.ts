import type { ColumnType, Generated } from 'kysely';

/** Kysely's view of the tables created by the SQL migrations in ./migrations. Keep the two in step. */

// The runs and workers slices declare their own tables; they are composed into DB here for now.
import type {
  RunAttachmentsTable,
  RunEventsTable,
  RunInputsTable,
  RunsTable,
  RunTranscriptTable,
} from '../../runs/tables.js';
import type { WorkerConnectionsTable, WorkerKeysTable, WorkerSkillsTable } from '../../workers/tables.js';
import type { Json, NullableJson, NullableTimestamp, Timestamp } from './columns.js';

export type {
  RunAttachmentsTable,
  RunEventsTable,
  RunInputsTable,
  RunsTable,
  RunTranscriptTable,
  WorkerConnectionsTable,
  WorkerKeysTable,
  WorkerSkillsTable,
};

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
