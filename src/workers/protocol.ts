import { type Static, type TProperties, Type } from 'typebox';
import { Compile } from 'typebox/compile';
import type { EnvironmentConfig } from '../environments/index.js';
import type { ResolvedDefinition } from '../mcp/index.js';

/**
 * The self-hosted worker protocol: JSON text frames `{type, data}` over the websocket at
 * /api/v1/selfhosted/worker/ws (docs/worker-protocol.md). A worker message with `data.call_id` is answered by a
 * `reply` with the same call_id, so a worker knows what the server has applied.
 */

/** What a worker needs to execute one run, sent with `task_assignment`. */
export interface TaskAssignment {
  task_id: string;
  execution_id: number;
  task: {
    team_uid: string;
    prompt: string;
    /** The run's resolved config (model, harness, base prompt, MCP servers, ...). */
    agent_config: Record<string, unknown>;
    harness: string | null;
    conversation_id: string | null;
    environment_id: string | null;
  };
  /** The environment to prepare (repositories, setup commands), or null. */
  environment: EnvironmentConfig | null;
  /** What the run's earlier executions used, summed (a continued run's spend cap counts it); absent for its first. */
  usage_before?: Record<string, number>;
  /** The transcript of the conversation's earlier executions, for a harness to resume it. */
  history: Array<{ execution_id: number; stream: 'input' | 'output'; line: string; at: string }>;
  /** Run-scoped variables for the harness, including a task token valid only for this execution. */
  env_vars: Record<string, string>;
  /** Files for the workspace (API attachments, a webhook delivery's payload). */
  attachments?: Array<{ file_name: string; data_base64: string }>;
  /** The team secrets the run's `harness_auth_secrets` names, by name: the API keys of its harness. */
  auth_secrets?: Record<string, string>;
  /**
   * The value of the environment's registry secret, from the team that owns the environment (a shared one's is its
   * owner's, never the guest's): the worker's container sandbox pulls the image with it.
   */
  registry_secret?: string;
  /** The registered MCP servers the run names by `warp_id`, by uid, with their secrets filled in. */
  mcp_servers?: Record<string, ResolvedDefinition>;
  /** W3C traceparent of the run's trace (server tracing on): the worker's spans of the execution join it. */
  traceparent?: string;
  /** CLAIMED for a run pod's execution (its Job's creator took the run); absent: PENDING, the worker takes it. */
  state?: 'PENDING' | 'CLAIMED';
}

export type ServerMessage =
  | { type: 'task_assignment'; data: TaskAssignment }
  | { type: 'task_cancellation'; data: { task_id: string; execution_id: number; reason: string } }
  /** Follow-ups were sent to the running task: take them with task_followups_take if the harness accepts input. */
  | { type: 'task_followups_available'; data: { task_id: string; execution_id: number } }
  | {
      type: 'reply';
      data: { call_id: string; ok: true; result: unknown } | { call_id: string; ok: false; error: string };
    };

const TaskRef = {
  task_id: Type.String({ minLength: 1, maxLength: 100 }),
  execution_id: Type.Integer({ minimum: 1 }),
  call_id: Type.Optional(Type.String({ maxLength: 100 })),
};
const TimelineEvent = Type.Object({
  type: Type.String({ minLength: 1, maxLength: 100 }),
  payload: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
});
const Events = Type.Array(TimelineEvent, { maxItems: 1000 });
const Usage = Type.Union([Type.Record(Type.String(), Type.Number()), Type.Null()]);
const message = <T extends string, D extends TProperties>(type: T, data: D) =>
  Type.Object({ type: Type.Literal(type), data: Type.Object(data) });

export const WorkerMessage = Type.Union([
  message('worker_status', {
    running: Type.Array(Type.Object({ task_id: Type.String(), execution_id: Type.Integer() }), { maxItems: 10_000 }),
    max_concurrent_tasks: Type.Integer({ minimum: 0, maximum: 10_000 }),
    accepting: Type.Boolean(),
  }),
  message('worker_skills', {
    skills: Type.Array(
      Type.Object({
        path: Type.String({ minLength: 1, maxLength: 1024 }),
        name: Type.String({ minLength: 1, maxLength: 200 }),
        description: Type.String({ maxLength: 2000 }),
        base_prompt: Type.String({ maxLength: 100_000 }),
      }),
      { maxItems: 500 },
    ),
  }),
  message('task_claimed', TaskRef),
  message('task_rejected', { ...TaskRef, reason: Type.Optional(Type.String({ maxLength: 2000 })) }),
  message('task_started', {
    ...TaskRef,
    harness: Type.String({ maxLength: 200 }),
    conversation_id: Type.String({ maxLength: 100 }),
    model_id: Type.Optional(Type.String({ maxLength: 200 })),
    setup_seconds: Type.Optional(Type.Number({ minimum: 0, maximum: 7 * 86_400 })),
  }),
  message('task_events', { ...TaskRef, events: Events }),
  message('task_output', {
    ...TaskRef,
    lines: Type.Array(
      Type.Object({ stream: Type.Union([Type.Literal('input'), Type.Literal('output')]), line: Type.String() }),
      { maxItems: 5000 },
    ),
  }),
  message('task_followups_take', TaskRef),
  /** The execution's GitHub tokens (its environment's repositories), minted by the server: see github-tokens.ts. */
  message('task_github_access', TaskRef),
  message('task_followups_return', {
    ...TaskRef,
    seqs: Type.Array(Type.String({ maxLength: 30 }), { maxItems: 10_000 }),
  }),
  message('task_environment', { ...TaskRef, environment_id: Type.String({ maxLength: 100 }), failed: Type.Boolean() }),
  message('task_usage', { ...TaskRef, usage: Type.Record(Type.String(), Type.Number()) }),
  message('task_released', { ...TaskRef, reason: Type.String({ maxLength: 2000 }) }),
  message('task_stopped', TaskRef),
  message('task_completed', {
    ...TaskRef,
    state: Type.Optional(Type.Union([Type.Literal('SUCCEEDED'), Type.Literal('BLOCKED')])),
    status_message: Type.Optional(Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()])),
    usage: Type.Optional(Usage),
    event_payload: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    events_before: Type.Optional(Events),
  }),
  message('task_failed', {
    ...TaskRef,
    message: Type.String({ maxLength: 10_000 }),
    failure_reason: Type.Optional(Type.String({ maxLength: 100 })),
    exit_code: Type.Optional(Type.Union([Type.Integer(), Type.Null()])),
    state: Type.Optional(Type.Union([Type.Literal('FAILED'), Type.Literal('ERROR')])),
    retryable: Type.Optional(Type.Boolean()),
    usage: Type.Optional(Usage),
    event_payload: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    events_before: Type.Optional(Events),
  }),
]);
export type WorkerMessage = Static<typeof WorkerMessage>;
export type WorkerMessageOf<T extends WorkerMessage['type']> = Extract<WorkerMessage, { type: T }>;

/** Message types the server knows; a frame of any other type is ignored, so newer workers can add their own. */
export const WORKER_MESSAGE_TYPES = new Set(
  WorkerMessage.anyOf.map((schema) => schema.properties.type.const as string),
);

export const checkWorkerMessage = Compile(WorkerMessage);
