// The parts of Hangar's wire format (/api/v1) the dashboard reads, taken from schema.d.ts: it is generated from
// /api/v1/openapi.json, so the server's TypeBox schemas are the one source.
import type { paths } from './schema';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** The JSON body of an operation's success answer (200 or 201). */
type Answer<Path extends keyof paths, Verb extends Method = 'get'> = paths[Path][Verb] extends {
  responses: infer Responses;
}
  ? Responses[keyof Responses & (200 | 201)] extends { content: { 'application/json': infer Body } }
    ? Body
    : never
  : never;

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

/** The webhook create body's enums (schema.d.ts, generated from the server's one list). */
type WebhookCreate = RequestOf<'/factory/webhooks'>;
export type SignatureScheme = NonNullable<WebhookCreate['signature_scheme']>;
export const SIGNATURE_SCHEMES = everyOne<SignatureScheme>()([
  'github',
  'stripe',
  'standard_webhooks',
  'sentry',
  'pagerduty',
  'vercel',
]);

/** The JSON body an operation takes. */
type RequestOf<Path extends keyof paths, Verb extends Method = 'post'> = paths[Path][Verb] extends {
  requestBody?: { content: { 'application/json': infer Body } };
}
  ? Body
  : never;

export type Run = Answer<'/agent/runs/{runId}'>;
export type RunList = Answer<'/agent/runs'>;
export type RunArtifact = Run['artifacts'][number];
export type CreateRunRequest = RequestOf<'/agent/runs'>;
export type CreateRunResponse = Answer<'/agent/runs', 'post'>;
export type TimelineEvent = Answer<'/agent/runs/{runId}/timeline'>['events'][number];
export type ShareLink = Answer<'/agent/runs/{runId}/sharing'>;
export type SharedRun = Answer<'/shared/run'>;

type ConversationAnswer = Answer<'/agent/runs/{runId}/conversation'>;
type StepAnswer = ConversationAnswer['steps'][number];
type MessageAnswer = StepAnswer['messages'][number];

/** Refused by the compiler when a block written here no longer fits the document's block. */
type FitsTheDocument<Written extends MessageAnswer['content'][number]> = Written;

/** Written here: the document describes a block only as `{ type }` with more members (src/runs/conversation.ts). */
export type Block = FitsTheDocument<
  | { type: 'text'; text: string }
  | { type: 'action'; id: string; category: string; name: string; input: unknown }
  | { type: 'action_result'; action_id: string; category: string; name: string; state: string; output: unknown }
  | { type: 'event'; name: string; data: unknown }
>;
/** Written here: the document gives a message's role as a string; the normalizer emits these four. */
export type Message = Omit<MessageAnswer, 'role' | 'content'> & {
  role: 'user' | 'assistant' | 'tool' | 'system';
  content: Block[];
};
/** The document cannot nest a step in a step (it says `object`), so the nesting is restated. */
export type Step = Omit<StepAnswer, 'messages' | 'steps'> & { messages: Message[]; steps: Step[] };
export type Conversation = Omit<ConversationAnswer, 'steps'> & { steps: Step[] };

export type Artifact = Answer<'/agent/artifacts/{artifactUid}'>;
export type Schedule = Answer<'/agent/schedules'>['schedules'][number];
export type Environment = Answer<'/agent/environments'>['environments'][number];
export type EnvironmentDetail = Answer<'/environments/{uid}'>;
export type AgentIdentity = Answer<'/agent/identities'>['agents'][number];
export type ConnectedWorker = Answer<'/agent/connected-self-hosted-workers'>['workers'][number];
export type ModelList = Answer<'/agent/models'>;
export type RunnerList = Answer<'/runners'>;
export type Runner = RunnerList['runners'][number];
export type RunnerRequest = RequestOf<'/runners'>;
export type Webhook = Answer<'/factory/webhooks/{uid}'>;
export type Delivery = Answer<'/factory/webhooks/{uid}/deliveries/{delivery_id}'>;
export type DeliveryList = Answer<'/factory/webhooks/{uid}/deliveries'>;
export type Automation = Answer<'/factory/automations'>['automations'][number];
export type CreateEnvironmentRequest = RequestOf<'/environments'>;
export type ScheduleRequest = RequestOf<'/agent/schedules'>;
export type TestFilterRequest = RequestOf<'/factory/automations/test-filter'>;
export type TestFilterResult = Answer<'/factory/automations/test-filter', 'post'>;
export type Overview = Answer<'/overview'>;

/**
 * Why a QUEUED or PENDING run waits, and the output of the command a failed run ended on (issue 26). Written here
 * as well as generated: the intersection below still compiles once the generated schema has the fields itself.
 */
export interface QueueReason {
  code: 'no_harness' | 'at_capacity' | 'team_at_capacity' | 'waiting_for_worker' | (string & {});
  message: string;
}
export interface FailureOutput {
  command: string;
  lines: string[];
}
interface Explained {
  queue_reason?: QueueReason | null;
  failure_output?: FailureOutput | null;
}
export type ExplainedRun = Run & Explained;
export type ExplainedRunItem = RunList['runs'][number] & Explained;

/** GET /admin/status (instance administrators): the same summary and checks as `hangar doctor`. */
export interface InstanceStatus {
  summary: Record<string, unknown>;
  checks: { name: string; ok: boolean; detail?: string | null; warning?: boolean }[];
}

export type Team = Answer<'/admin/teams'>['teams'][number];
/** GET /admin/teams/{teamUid}/github (instance administrators): the installations and token secret a team uses. */
export type GitHubLinks = Answer<'/admin/teams/{teamUid}/github'>;
