import type { ColumnType, Generated } from 'kysely';
import type { NullableJson, NullableTimestamp, Timestamp } from '../platform/db/columns.js';

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
  /** Its API key may create runs on behalf of a member of the team (migration 0049). */
  on_behalf_of_enabled: Generated<boolean>;
  /** The runner its runs take when they name none (migration 0050): a runner of its team, by uid. */
  default_runner_uid: Generated<string | null>;
  /** What it is for (migration 0046): a factory's FOREMAN takes the factory's work; CUSTOM by default. */
  agent_type: Generated<AgentType>;
  /** The team secrets its third-party harnesses sign in with, by harness (migration 0046). */
  harness_auth_secrets: NullableJson<{ claude_auth_secret_name?: string; codex_auth_secret_name?: string }>;
  /** Whose GitHub identity its runs' tokens stand for when a run says nothing (migration 0046); null: EXECUTOR. */
  credential_strategy: Generated<'CREATOR' | 'EXECUTOR' | null>;
}

export const AGENT_TYPES = ['FOREMAN', 'TRIAGE', 'SPEC', 'IMPLEMENT', 'REVIEW', 'VERIFY', 'CUSTOM'] as const;
export type AgentType = (typeof AGENT_TYPES)[number];

/** A team secret: AES-256-GCM ciphertext only (see src/platform/crypto.ts). */
export interface AuthFailureWindowsTable {
  client: string;
  window_start: Timestamp;
  shard: number;
  count: number;
}

/** The identities slice's tables, as Kysely sees them (src/database.ts composes every slice's into DB). */
export interface IdentitiesTables {
  teams: TeamsTable;
  users: UsersTable;
  team_members: TeamMembersTable;
  api_keys: ApiKeysTable;
  agent_identities: AgentIdentitiesTable;
  auth_failure_windows: AuthFailureWindowsTable;
}
