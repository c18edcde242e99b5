import { type Static, Type } from 'typebox';
import { BUILT_IN_HARNESSES } from '../models/index.js';
import { RefusalEntrySchema } from '../network/index.js';
import { literalUnion } from '../platform/http/literal-union.js';
import { ARTIFACT_TYPES } from './artifact-types.js';
import { RUN_STATES } from './lifecycle/states.js';
import { EXECUTION_LOCATIONS, RUN_SOURCES } from './run-fields.js';

/** Wire schemas of the runs slice: one source for validation, TypeScript types and the OpenAPI document. */

export { RUN_STATES, type RunState } from './lifecycle/states.js';
export { EXECUTION_LOCATIONS, RUN_SOURCES, type RunSource } from './run-fields.js';

export const HARNESS_TYPES = BUILT_IN_HARNESSES;
export const RUN_MODES = ['normal', 'plan', 'orchestrate'] as const;
export const CREDENTIAL_STRATEGIES = ['CREATOR', 'EXECUTOR'] as const;
export type CredentialStrategy = (typeof CREDENTIAL_STRATEGIES)[number];
export const SHARE_ACCESS_LEVELS = ['VIEWER', 'EDITOR'] as const;
export type ShareAccess = (typeof SHARE_ACCESS_LEVELS)[number];

const StringMap = Type.Record(Type.String(), Type.String());

export const AgentConfig = Type.Object(
  {
    name: Type.Optional(Type.String({ maxLength: 200 })),
    model_id: Type.Optional(Type.String({ maxLength: 200 })),
    base_prompt: Type.Optional(Type.String({ maxLength: 100_000 })),
    max_cost_usd: Type.Optional(
      Type.Number({
        exclusiveMinimum: 0,
        description:
          "Spend cap of the run in USD: it ends FAILED with budget_exceeded once its inference cost goes past it (default and maximum: the operator's)",
      }),
    ),
    environment_id: Type.Optional(Type.String({ maxLength: 64 })),
    skill_spec: Type.Optional(Type.String({ maxLength: 1024 })),
    skills: Type.Optional(Type.Array(Type.String({ maxLength: 1024 }), { maxItems: 50 })),
    mcp_servers: Type.Optional(Type.Record(Type.String(), Type.Object({}, { additionalProperties: true }))),
    worker_host: Type.Optional(Type.String({ maxLength: 200 })),
    runner_id: Type.Optional(
      Type.String({
        maxLength: 64,
        description:
          "A runner of the team (GET /runners): the sandbox kind and shape the run executes with. Left out: the agent's default_runner_uid, then the environment's, then the operator's settings; the runner it resolved to is recorded here",
      }),
    ),
    runner: Type.Optional(
      Type.Object(
        {
          name: Type.String(),
          sandbox: Type.Optional(Type.String()),
          limits: Type.Optional(
            Type.Object({
              cpus: Type.Optional(Type.Number()),
              memory: Type.Optional(Type.String()),
              pids: Type.Optional(Type.Integer()),
            }),
          ),
          kubernetes: Type.Optional(Type.Object({}, { additionalProperties: true })),
        },
        {
          description:
            "The shape of the runner as it was when the run was created (Hangar records it; a request's is ignored): later edits of the runner change later runs only",
        },
      ),
    ),
    harness: Type.Optional(
      Type.Object({
        type: Type.Optional(
          Type.String({
            maxLength: 63,
            description: `A built-in harness (${HARNESS_TYPES.join(', ')}) or one the operator configured.`,
          }),
        ),
        model_id: Type.Optional(Type.String({ maxLength: 200 })),
        reasoning_level: Type.Optional(Type.String({ maxLength: 50 })),
      }),
    ),
    github: Type.Optional(
      Type.Object(
        {
          pull_request: Type.Optional(
            Type.Union([Type.Literal('open'), Type.Literal('draft'), Type.Literal('off')], {
              description:
                'What Hangar does when the run ends SUCCEEDED with changes in a repository its team reaches through GitHub: push a branch and open a pull request (`open`, the default), open it as a draft, or leave the changes (`off`)',
            }),
          ),
          branch: Type.Optional(
            Type.String({
              pattern: '^(?!-)(?!.*\\.\\.)(?!.*//)(?!.*\\.lock$)[A-Za-z0-9._/-]{1,200}(?<![/.])$',
              description: 'The branch Hangar pushes (default `hangar/<run-id>`); a follow-up pushes to it again',
            }),
          ),
          gh_token: Type.Optional(
            Type.Boolean({
              description:
                "Give the harness the execution's GitHub token as GH_TOKEN (for the gh CLI); git works without it, through a credential helper",
            }),
          ),
        },
        { description: "Hangar's GitHub behaviour for this run (docs/github.md)." },
      ),
    ),
    idle_timeout_minutes: Type.Optional(Type.Integer({ minimum: 1, maximum: 60 })),
    computer_use_enabled: Type.Optional(Type.Boolean()),
    computer_use_model_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description:
          "The model a computer-use subagent would run on. Recorded and returned as given; none of Hangar's harnesses has a computer-use subagent, so it changes nothing of how the run executes",
      }),
    ),
    credential_strategy: Type.Optional(
      Type.Union([literalUnion(CREDENTIAL_STRATEGIES), Type.Null()], {
        description:
          "Whose GitHub identity the execution's GitHub tokens stand for (docs/github.md): EXECUTOR, the team's GitHub access (installation tokens, the team's token secret), or CREATOR, the run's creator: the installation token is limited to what the GitHub login the creator is mapped to may do on each repository, and a repository only the team's token secret covers is refused. Left out or null: the executing agent's credential_strategy, else EXECUTOR; the run records the one it resolved to",
      }),
    ),
    session_sharing: Type.Optional(
      Type.Object(
        {
          public_access: literalUnion(SHARE_ACCESS_LEVELS, {
            description:
              'VIEWER: anyone with the link reads the run (its page, conversation and timeline); EDITOR: they may also send it follow-ups',
          }),
        },
        {
          description:
            "A link to the run for people without an API key (docs/api.md, Sharing a run): its URL is in the create answer's session_sharing, once. PUT /agent/runs/{runId}/sharing makes a new one later, DELETE revokes it",
        },
      ),
    ),
    harness_auth_secrets: Type.Optional(
      Type.Object({
        claude_auth_secret_name: Type.Optional(Type.String({ maxLength: 200 })),
        codex_auth_secret_name: Type.Optional(Type.String({ maxLength: 200 })),
      }),
    ),
  },
  { description: 'Agent configuration of a run. Unknown members are ignored.' },
);
export type AgentConfig = Static<typeof AgentConfig>;

const Attachment = Type.Object({
  file_name: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  mime_type: Type.String({ minLength: 1, maxLength: 255 }),
  data: Type.String({ description: 'base64-encoded content' }),
});

export const CreateRunBody = Type.Object({
  prompt: Type.Optional(Type.String({ maxLength: 200_000, description: 'Required unless a skill is given.' })),
  title: Type.Optional(Type.String({ maxLength: 500 })),
  config: Type.Optional(AgentConfig),
  skill: Type.Optional(Type.String({ maxLength: 1024, description: 'Skill spec; wins over config.skill_spec.' })),
  mode: Type.Optional(literalUnion(RUN_MODES)),
  team: Type.Optional(Type.Boolean({ description: 'Team-owned run (default) or personal run.' })),
  agent_identity_uid: Type.Optional(Type.String({ maxLength: 64 })),
  conversation_id: Type.Optional(Type.String({ maxLength: 200 })),
  parent_run_id: Type.Optional(Type.String({ maxLength: 200 })),
  metadata: Type.Optional(Type.Record(Type.String(), Type.String())),
  attachments: Type.Optional(Type.Array(Attachment, { maxItems: 5 })),
  images: Type.Optional(Type.Array(Attachment, { maxItems: 5, description: 'Older name for image attachments.' })),
  interactive: Type.Optional(Type.Boolean()),
  on_behalf_of: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 320,
      description:
        'A member of the team (user ID or e-mail) the run is created for: its creator is then that member and its executor the calling agent. Only with the API key of an agent whose on_behalf_of_enabled is true.',
    }),
  ),
});
export type CreateRunBody = Static<typeof CreateRunBody>;

export const QueueReason = Type.Object(
  {
    code: Type.String({
      description:
        'no_harness (no engine can execute runs: no model key and no harness, or no engine process), at_capacity, team_at_capacity, waiting_for_worker, waiting_for_engine; more may come.',
    }),
    message: Type.String({ description: 'In words, naming what to set or start.' }),
  },
  { description: 'Why a QUEUED or PENDING run waits; absent in every other state.' },
);

export const FailureOutput = Type.Object(
  {
    command: Type.String({ description: 'The failing setup command, `git clone owner/repo`, or `harness <name>`.' }),
    lines: Type.Array(Type.String(), {
      description: "Its output's last ~20 lines; its first error lines are kept when they scrolled out of those.",
    }),
  },
  { description: 'What the failing command printed, on a FAILED or ERROR run whose setup command or harness failed.' },
);

/** A run's share link as its owners see it: the link's URL only where it was just made (it is kept hashed). */
export const ShareLink = Type.Object(
  {
    public_access: literalUnion(SHARE_ACCESS_LEVELS),
    created_at: Type.String({ format: 'date-time' }),
    created_by: Type.Object({ type: Type.String(), uid: Type.String() }),
    url: Type.Optional(
      Type.String({
        description:
          'The link, shown once (Hangar keeps only a hash of its secret): the dashboard page `<public URL>/shared/run#<secret>`; the secret is after the `#`, so no server log or Referer carries it',
      }),
    ),
  },
  { description: "The run's active share link (config.session_sharing)" },
);

export const CreateRunResponse = Type.Object({
  run_id: Type.String(),
  task_id: Type.String({ description: 'Same as run_id (deprecated).' }),
  state: Type.String(),
  at_capacity: Type.Optional(Type.Boolean()),
  queue_reason: Type.Optional(QueueReason),
  session_sharing: Type.Optional(ShareLink),
});

export const RunIdParams = Type.Object({ runId: Type.String({ minLength: 1, maxLength: 200 }) });

export const ListRunsQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 500, default: 20 }),
  cursor: Type.Optional(Type.String({ maxLength: 4096 })),
  sort_by: Type.Union(
    ['updated_at', 'created_at', 'title', 'agent'].map((value) => Type.Literal(value)),
    { default: 'updated_at' },
  ),
  sort_order: Type.Union([Type.Literal('asc'), Type.Literal('desc')], { default: 'desc' }),
  state: Type.Optional(Type.Array(Type.Union(RUN_STATES.map((value) => Type.Literal(value))))),
  name: Type.Optional(Type.String()),
  model_id: Type.Optional(Type.String()),
  creator: Type.Optional(Type.String()),
  executor: Type.Optional(Type.String()),
  source: Type.Optional(Type.Union(RUN_SOURCES.map((value) => Type.Literal(value)))),
  execution_location: Type.Optional(Type.Union(EXECUTION_LOCATIONS.map((value) => Type.Literal(value)))),
  created_after: Type.Optional(Type.String({ format: 'date-time' })),
  created_before: Type.Optional(Type.String({ format: 'date-time' })),
  updated_after: Type.Optional(Type.String({ format: 'date-time' })),
  environment_id: Type.Optional(Type.String({ description: '`empty-environment` matches runs without one.' })),
  skill: Type.Optional(Type.String()),
  skill_spec: Type.Optional(Type.String()),
  schedule_id: Type.Optional(Type.String()),
  ancestor_run_id: Type.Optional(Type.String()),
  artifact_type: Type.Optional(Type.Union(ARTIFACT_TYPES.map((value) => Type.Literal(value)))),
  automation_id: Type.Optional(
    Type.Array(Type.String({ maxLength: 200 }), {
      maxItems: 50,
      description: 'Runs fired by one of these automations (repeatable).',
    }),
  ),
  factory_uid: Type.Optional(
    Type.Array(Type.String({ maxLength: 200 }), {
      maxItems: 50,
      description: "Runs from one of these factories: an automation's or the executing agent's (repeatable).",
    }),
  ),
  q: Type.Optional(
    Type.String({
      maxLength: 500,
      description:
        'Search: runs whose title, prompt or skill spec contain every word (at most 10), each as a substring or a close spelling (one letter wrong or missing in a longer word); a run ID, or a run URL (its session_link), also finds that run.',
    }),
  ),
});
export type ListRunsQuery = Static<typeof ListRunsQuery>;

const Profile = Type.Object({
  type: Type.String(),
  uid: Type.String(),
  display_name: Type.Optional(Type.String()),
  email: Type.Optional(Type.String()),
  photo_url: Type.Optional(Type.String()),
});

const LooseObject = Type.Object({}, { additionalProperties: true });

/** USD split by kind of token (Hangar prices cached input as input: the cache parts are 0). */
const CostByToken = Type.Object({
  input_cost_usd: Type.Number(),
  input_cache_read_cost_usd: Type.Number(),
  input_cache_write_cost_usd: Type.Number(),
  output_cost_usd: Type.Number(),
});

const ModelUsage = Type.Object({
  cost_usd: CostByToken,
  token_count: Type.Object({
    input: Type.Integer(),
    input_cache_read: Type.Integer(),
    input_cache_write: Type.Integer(),
    output: Type.Integer(),
  }),
  web_search_cost_usd: Type.Number(),
  web_search_count: Type.Integer(),
});

export const RequestUsage = Type.Object(
  {
    input_tokens: Type.Optional(Type.Number()),
    output_tokens: Type.Optional(Type.Number()),
    total_tokens: Type.Optional(Type.Number({ description: "The run's tokens, over its executions and model calls." })),
    inference_cost: Type.Optional(Type.Number({ description: 'USD at the catalogue prices (Hangar has no credits).' })),
    inference_cost_usd: Type.Optional(Type.Number({ description: 'The same as inference_cost.' })),
    inference_cost_breakdown_usd: Type.Optional(
      Type.Object(CostByToken.properties, {
        description:
          "inference_cost split by kind of token, at the served model's catalogue prices; absent when the model has none",
      }),
    ),
    usage_by_category: Type.Optional(
      Type.Record(
        Type.String(),
        Type.Object({
          platform_usage_usd: Type.Number(),
          direct_api_inference_usage: Type.Optional(Type.Record(Type.String(), ModelUsage)),
          byok_inference_usage: Type.Optional(Type.Record(Type.String(), ModelUsage)),
        }),
        {
          description:
            "By category (every call Hangar meters is `primary_agent`), then by model: the operator's model access (direct_api_inference_usage) or the team's own key (byok_inference_usage)",
        },
      ),
    ),
    model_token_usage: Type.Optional(
      Type.Array(
        Type.Object({
          model_id: Type.String(),
          total_tokens: Type.Integer(),
          usage_type: Type.Union([Type.Literal('warp'), Type.Literal('byok'), Type.Literal('custom_endpoint')], {
            description: "warp: the operator's model keys; byok: the team's own key",
          }),
          tokens_by_category: Type.Optional(Type.Record(Type.String(), Type.Integer())),
        }),
      ),
    ),
  },
  { additionalProperties: true, description: "What the run's model calls used; harnesses may report more figures." },
);

export const ERROR_CATEGORIES = ['user', 'platform'] as const;

export const StatusMessage = Type.Object(
  {
    message: Type.String(),
    error_code: Type.Optional(Type.String()),
    retryable: Type.Optional(Type.Boolean()),
    session_debug_until: Type.Optional(
      Type.String({ format: 'date-time', description: 'When the debug window of a failed setup closes.' }),
    ),
    debug_agent_active: Type.Optional(
      Type.Boolean({ description: 'A debug agent is working in the kept workspace right now (its window is held).' }),
    ),
  },
  { additionalProperties: true },
);

export const RunItem = Type.Object({
  run_id: Type.String(),
  task_id: Type.String(),
  title: Type.String(),
  state: Type.String(),
  prompt: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
  started_at: Type.Optional(Type.String({ format: 'date-time' })),
  run_time: Type.Optional(
    Type.String({
      description:
        "ISO 8601 duration: the time the run's agent worked, each execution from its agent's start to its end, summed (docs/lifecycle.md); absent until an agent started",
    }),
  ),
  queue_wait: Type.Optional(
    Type.String({
      description:
        "ISO 8601 duration, to the millisecond: from the run's creation to its first claim by an engine or worker (docs/lifecycle.md); absent until claimed",
    }),
  ),
  finished_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'When the run last reached a terminal state; null while it is active',
  }),
  status_message: Type.Optional(StatusMessage),
  error_category: Type.Optional(
    Type.Union([Type.Literal(ERROR_CATEGORIES[0]), Type.Literal(ERROR_CATEGORIES[1])], {
      description:
        'On a FAILED or ERROR run with an error code: `user` (FAILED: something to fix on the caller side) or `platform` (ERROR: Hangar or its infrastructure)',
    }),
  ),
  debug_agent_available: Type.Boolean({
    description:
      'A follow-up would start a debug agent in the kept workspace of a failed setup now (the debug window is open)',
  }),
  trigger_url: Type.Optional(
    Type.String({
      format: 'uri',
      description:
        "What started the run: the GitHub comment or thread, the webhook's page, the schedule's page (dashboard pages under HANGAR_PUBLIC_URL)",
    }),
  ),
  root_run_id: Type.String({
    description: "The top of the run's tree of parent runs; its own run_id when it has no parent.",
  }),
  automation_id: Type.Optional(Type.String({ description: 'The automation that fired the run.' })),
  factory_uid: Type.Optional(
    Type.String({ description: 'The factory of the automation that fired it or of the agent that executes it.' }),
  ),
  queue_reason: Type.Optional(QueueReason),
  failure_output: Type.Optional(FailureOutput),
  network_refusals: Type.Optional(
    Type.Array(RefusalEntrySchema, {
      description:
        "What the environment's network allow lists refused this run, one entry per phase, host and port over all its executions, with the line that would allow each (docs/sandbox.md#the-account-of-refusals); only in GET /agent/runs/{id}, only when something was refused",
    }),
  ),
  session_sharing: Type.Optional(
    Type.Object(
      {
        public_access: literalUnion(SHARE_ACCESS_LEVELS),
        created_at: Type.String({ format: 'date-time' }),
        created_by: Type.Object({ type: Type.String(), uid: Type.String() }),
      },
      {
        description:
          'The active share link of the run (never its URL: that is shown once, when it is made); only in GET /agent/runs/{id}',
      },
    ),
  ),
  source: Type.String(),
  execution_location: Type.String(),
  schedule: Type.Optional(
    Type.Object({ schedule_id: Type.String(), schedule_name: Type.String(), cron_schedule: Type.String() }),
  ),
  session_id: Type.Optional(Type.String()),
  session_link: Type.String({
    description: "The run's page in the web dashboard, under HANGAR_PUBLIC_URL (every run has one).",
  }),
  creator: Profile,
  executor: Profile,
  request_usage: Type.Optional(RequestUsage),
  agent_config: LooseObject,
  conversation_id: Type.Optional(
    Type.String({
      description:
        'The conversation the run belongs to (GET /agent/conversations/{conversation_id}): given when the run continues one, otherwise set when its agent starts.',
    }),
  ),
  parent_run_id: Type.Optional(Type.String()),
  metadata: StringMap,
  is_sandbox_running: Type.Boolean(),
  is_run_type_cancellable: Type.Boolean(),
  artifacts: Type.Array(
    Type.Object({ artifact_type: Type.String(), created_at: Type.String({ format: 'date-time' }), data: LooseObject }),
  ),
  agent_skill: Type.Optional(
    Type.Object({ name: Type.String(), description: Type.Optional(Type.String()), full_path: Type.String() }),
  ),
  scope: Type.Object({ type: Type.String(), uid: Type.String() }),
  scores: Type.Array(
    Type.Object({
      scorer_id: Type.Integer(),
      scorer_name: Type.String(),
      classification: Type.String(),
      score: Type.Number(),
      passed: Type.Boolean(),
      failed: Type.Boolean(),
      reason: Type.String(),
      judge_run_id: Type.String(),
      created_at: Type.String({ format: 'date-time' }),
    }),
    { description: 'Verdicts of the judge runs that scored this run' },
  ),
});
export type RunItem = Static<typeof RunItem>;

export const ListRunsResponse = Type.Object({
  runs: Type.Array(RunItem),
  page_info: Type.Object({ has_next_page: Type.Boolean(), next_cursor: Type.Optional(Type.String()) }),
});

export const TimelineResponse = Type.Object({
  events: Type.Array(
    Type.Object({
      event_uuid: Type.String(),
      run_id: Type.String(),
      execution_id: Type.Optional(Type.String()),
      event_type: Type.String(),
      occurred_at: Type.String({ format: 'date-time' }),
      payload: Type.Optional(LooseObject),
    }),
  ),
});

export const FollowupBody = Type.Object({
  message: Type.Optional(
    Type.String({ maxLength: 200_000, description: 'May be empty only when continuing from the saved conversation.' }),
  ),
  mode: Type.Optional(literalUnion(RUN_MODES)),
});
export type FollowupBody = Static<typeof FollowupBody>;

export const ConversationIdParams = Type.Object({ conversationId: Type.String({ minLength: 1, maxLength: 200 }) });

const Block = Type.Object({ type: Type.String() }, { additionalProperties: true });
const Message = Type.Object({
  role: Type.String(),
  timestamp: Type.Optional(Type.String()),
  content: Type.Array(Block),
});
const Step = Type.Object({
  id: Type.String(),
  description: Type.Optional(Type.String()),
  summary: Type.Optional(Type.String()),
  started_at: Type.Optional(Type.String()),
  completed_at: Type.Optional(Type.String()),
  messages: Type.Array(Message),
  steps: Type.Array(Type.Object({}, { additionalProperties: true, description: 'Nested steps, of the same shape' })),
});
export const ConversationResponse = Type.Object({ conversation_id: Type.String(), steps: Type.Array(Step) });

export const SharedConversationResponse = Type.Object(
  { steps: Type.Array(Step) },
  { description: "The run's own part of its conversation, as its share link shows it (no conversation ID)" },
);

export const ShareBody = Type.Object({ public_access: literalUnion(SHARE_ACCESS_LEVELS) });
