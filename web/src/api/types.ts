// The parts of Hangar's wire format (/api/v1) the dashboard reads. The server's TypeBox schemas are the source.
import type { paths } from './schema';

/** The runs list's query: the server's enums come from here (schema.d.ts is generated from /api/v1/openapi.json). */
type RunsQuery = paths['/agent/runs']['get']['parameters']['query'];
export type RunState = NonNullable<RunsQuery['state']>[number];
export type RunSource = NonNullable<RunsQuery['source']>;
export type ArtifactType = NonNullable<RunsQuery['artifact_type']>;
export type SortField = RunsQuery['sort_by'];

/**
 * The members of a generated union, in the order the dashboard shows them. A union has no values at run time, so
 * the list is written here, but the compiler refuses it when it misses a member or has one the server lacks.
 */
const everyOne =
  <Union extends string>() =>
  <const List extends readonly Union[]>(
    values: List &
      ([Exclude<Union, List[number]>] extends [never] ? unknown : { missing: Exclude<Union, List[number]> }),
  ): List =>
    values;

export const RUN_STATES = everyOne<RunState>()([
  'QUEUED',
  'PENDING',
  'CLAIMED',
  'INPROGRESS',
  'SUCCEEDED',
  'FAILED',
  'BLOCKED',
  'ERROR',
  'CANCELLED',
]);
export const TERMINAL_STATES: readonly string[] = [
  'SUCCEEDED',
  'FAILED',
  'BLOCKED',
  'ERROR',
  'CANCELLED',
] satisfies RunState[];
export const isTerminal = (state: string) => TERMINAL_STATES.includes(state);

export const RUN_SOURCES = everyOne<RunSource>()([
  'API',
  'CLI',
  'WEB_APP',
  'SCHEDULED_AGENT',
  'WEBHOOK',
  'RUN_SCORER',
  'LINEAR',
  'SLACK',
  'LOCAL',
  'GITHUB_ACTION',
  'CLOUD_MODE',
  'JIRA',
  'SELF_IMPROVEMENT',
  'GITHUB_WEBHOOK',
  'GITLAB_WEBHOOK',
  'AUTOFIX',
  'ORCHESTRATION',
]);
export const ARTIFACT_TYPES = everyOne<ArtifactType>()([
  'PLAN',
  'PULL_REQUEST',
  'EXTERNAL_REFERENCE',
  'FILE',
  'SCREENSHOT',
]);
export const SORT_FIELDS = everyOne<SortField>()(['updated_at', 'created_at', 'title', 'agent']);

export interface Profile {
  type: string;
  uid: string;
  display_name?: string;
  email?: string;
}

export interface RunArtifact {
  artifact_type: string;
  created_at: string;
  data: Record<string, unknown> & { artifact_uid?: string };
}

export interface Run {
  run_id: string;
  title: string;
  state: string;
  prompt: string;
  created_at: string;
  updated_at: string;
  started_at?: string;
  run_time?: string;
  status_message?: { message?: string; error_code?: string; session_debug_until?: string } & Record<string, unknown>;
  source: string;
  execution_location: string;
  schedule?: { schedule_id: string; schedule_name: string; cron_schedule: string };
  creator: Profile;
  executor: Profile;
  request_usage?: Record<string, unknown>;
  agent_config: Record<string, unknown>;
  conversation_id?: string;
  parent_run_id?: string;
  metadata: Record<string, string>;
  is_sandbox_running: boolean;
  is_run_type_cancellable: boolean;
  artifacts: RunArtifact[];
  agent_skill?: { name: string; description?: string; full_path: string };
  scores: Array<{ scorer_name: string; classification: string; score: number; passed: boolean; reason: string }>;
}

export interface RunList {
  runs: Run[];
  page_info: { has_next_page: boolean; next_cursor?: string };
}

export interface CreateRunResponse {
  run_id: string;
  state: string;
  at_capacity?: boolean;
}

export interface TimelineEvent {
  event_uuid: string;
  run_id: string;
  execution_id?: string;
  event_type: string;
  occurred_at: string;
  payload?: Record<string, unknown>;
}

export type Block =
  | { type: 'text'; text: string }
  | { type: 'action'; id: string; category: string; name: string; input: unknown }
  | { type: 'action_result'; action_id: string; category: string; name: string; state: string; output: unknown }
  | { type: 'event'; name: string; data: unknown };

export interface Message {
  role: 'user' | 'assistant' | 'tool' | 'system';
  timestamp?: string;
  content: Block[];
}

export interface Step {
  id: string;
  description?: string;
  summary?: string;
  started_at?: string;
  completed_at?: string;
  messages: Message[];
  steps: Step[];
}

export interface Conversation {
  conversation_id: string;
  steps: Step[];
}

export interface Artifact {
  artifact_uid: string;
  artifact_type: string;
  created_at: string;
  data: Record<string, unknown> & { download_url?: string; content?: string; filename?: string };
}

export interface Schedule {
  id: string;
  name: string;
  cron_schedule: string;
  enabled: boolean;
  prompt: string;
  created_at: string;
  updated_at: string;
  agent_config?: Record<string, unknown>;
  agent_uid?: string;
  metadata: Record<string, string>;
  history: { last_ran: string | null; next_run: string | null };
  last_spawn_error: string | null;
}

export interface Environment {
  uid: string;
  config: {
    name: string;
    description: string;
    docker_image?: string;
    github_repos: Array<{ owner: string; repo: string }>;
    setup_commands: string[];
    failure_session_retention_minutes: number | null;
  };
  last_updated: string;
  setup_failed: boolean;
  last_task_run_timestamp?: string;
  last_task_created?: string;
  access: 'owner' | 'guest' | 'link';
  created_at: string;
}

export interface AgentIdentity {
  uid: string;
  name: string;
  description?: string;
  prompt?: string;
  environment_id?: string;
  base_model?: string;
  worker_host?: string;
  skills: string[];
  available: boolean;
  created_at: string;
  updated_at: string;
}

export interface ConnectedWorker {
  worker_host: string;
  connection_count: number;
  connected_at: string;
  last_seen_at: string;
}

export interface Webhook {
  uid: string;
  name: string;
  factory_uid: string;
  auth_mode: string;
  signature_scheme: string | null;
  secret_name: string | null;
  delivery_id_header: string | null;
  enabled: boolean;
  url: string;
  created_at: string;
  updated_at: string;
  /** Only in the answers that issue a secret: shown once. */
  secret?: string;
}

export interface Delivery {
  delivery_id: string;
  status: string;
  size_bytes: number;
  received_at: string;
  evaluated_at?: string | null;
  payload?: unknown;
  runs?: Array<{ automation_id: string; run_id: string | null; error: string | null }>;
}

export interface DeliveryList {
  deliveries: Delivery[];
  next_cursor: string | null;
}

export interface Automation {
  id: string;
  name: string;
  factory_uid: string;
  prompt: string;
  enabled: boolean;
  agent_uid: string | null;
  agent_config: Record<string, unknown> | null;
  triggers: Array<Record<string, unknown>>;
  webhooks: Array<{ uid: string; name: string | null; state: 'enabled' | 'disabled' | 'deleted' }>;
  schedule: { next_run: string | null; last_ran: string | null; last_spawn_error: string | null } | null;
  created_at: string;
  updated_at: string;
}

export interface TestFilterResult {
  would_trigger: boolean;
  webhook_check: { passed: boolean; detail: string };
  payload_check: { passed: boolean; detail: string };
}
