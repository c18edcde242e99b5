import { type Static, Type } from 'typebox';
import { GITHUB_EVENT_KINDS, type GitHubEventKind } from '../github/index.js';
import { AgentConfig } from '../runs/index.js';

/** Wire schemas of automations (/api/v1/factory/automations). */

export const MAX_TRIGGERS = 10;
export const MAX_WEBHOOKS_PER_TRIGGER = 20;

const PayloadFilter = Type.Record(Type.String(), Type.Unknown(), {
  description:
    'Mirrors the body: each key a field; a value, a list of allowed values, {in, not_in, exists}, or a nested filter',
});

export const WebhookFilter = Type.Object(
  {
    webhook_ids: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
      minItems: 1,
      maxItems: MAX_WEBHOOKS_PER_TRIGGER,
      description: 'Webhook UIDs (not names)',
    }),
    payload: Type.Optional(PayloadFilter),
  },
  { additionalProperties: false },
);
export type WebhookFilter = Static<typeof WebhookFilter>;

export const WebhookTrigger = Type.Object(
  { provider: Type.Literal('webhook'), event: Type.Literal('received'), filter: WebhookFilter },
  { additionalProperties: false },
);
export const ScheduleTrigger = Type.Object(
  {
    provider: Type.Literal('schedule'),
    event: Type.Literal('cron_fired'),
    schedule: Type.Object(
      {
        cron: Type.String({
          minLength: 1,
          maxLength: 200,
          description: '5-field cron in UTC, or a macro such as @daily',
        }),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);
export const GitHubTrigger = Type.Object(
  {
    provider: Type.Literal('github'),
    event: Type.Union(
      GITHUB_EVENT_KINDS.map((kind: GitHubEventKind) => Type.Literal(kind)),
      {
        description:
          "The GitHub App's deliveries to the team's linked installations: `mention` (an issue or pull request comment mentioning the App's handle), `label` (an issue got a label; filter on label.name), `review` (a pull request review requested changes)",
      },
    ),
    filter: Type.Optional(
      Type.Object(
        { payload: Type.Optional(PayloadFilter) },
        { additionalProperties: false, description: "A filter over GitHub's delivery body" },
      ),
    ),
  },
  { additionalProperties: false },
);
export const Trigger = Type.Union([WebhookTrigger, ScheduleTrigger, GitHubTrigger]);
export type Trigger = Static<typeof Trigger>;
export type WebhookTrigger = Static<typeof WebhookTrigger>;
export type GitHubTrigger = Static<typeof GitHubTrigger>;

const fields = {
  name: Type.String({ minLength: 1, maxLength: 100 }),
  prompt: Type.String({
    minLength: 1,
    maxLength: 100_000,
    description: 'What the agent does; a delivery is attached after it',
  }),
  enabled: Type.Boolean({ default: true }),
  agent_uid: Type.Union([Type.String({ maxLength: 64 }), Type.Null()], {
    description: 'Agent identity that executes the runs',
  }),
  agent_config: Type.Union([AgentConfig, Type.Null()], {
    description: 'Run config overrides: model, harness, environment, ...',
  }),
  triggers: Type.Array(Trigger, { minItems: 1, maxItems: MAX_TRIGGERS }),
};

export const CreateAutomationBody = Type.Object(
  {
    name: fields.name,
    prompt: fields.prompt,
    triggers: fields.triggers,
    enabled: Type.Optional(fields.enabled),
    agent_uid: Type.Optional(fields.agent_uid),
    agent_config: Type.Optional(fields.agent_config),
    factory_uid: Type.Optional(Type.String({ maxLength: 64, description: "Default: the team's default factory" })),
  },
  { additionalProperties: false },
);
export type CreateAutomationBody = Static<typeof CreateAutomationBody>;

/** Omitted fields stay as they are; null clears agent_uid or agent_config. */
export const UpdateAutomationBody = Type.Object(
  {
    name: Type.Optional(fields.name),
    prompt: Type.Optional(fields.prompt),
    triggers: Type.Optional(fields.triggers),
    enabled: Type.Optional(fields.enabled),
    agent_uid: Type.Optional(fields.agent_uid),
    agent_config: Type.Optional(fields.agent_config),
  },
  { additionalProperties: false },
);
export type UpdateAutomationBody = Static<typeof UpdateAutomationBody>;

export const AutomationIdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });
export const ListAutomationsQuery = Type.Object({ factory_uid: Type.Optional(Type.String({ maxLength: 64 })) });

const SelectedWebhook = Type.Object({
  uid: Type.String(),
  name: Type.Union([Type.String(), Type.Null()]),
  state: Type.Union([Type.Literal('enabled'), Type.Literal('disabled'), Type.Literal('deleted')], {
    description: 'deleted: deliveries can no longer come from it',
  }),
});

export const AutomationItem = Type.Object({
  id: Type.String(),
  name: Type.String(),
  factory_uid: Type.String(),
  prompt: Type.String(),
  enabled: Type.Boolean(),
  agent_uid: Type.Union([Type.String(), Type.Null()]),
  agent_config: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()]),
  triggers: Type.Array(Type.Object({}, { additionalProperties: true })),
  webhooks: Type.Array(SelectedWebhook, { description: 'The webhooks the triggers select, as they are now' }),
  schedule: Type.Union(
    [
      Type.Object({
        next_run: Type.Union([Type.String(), Type.Null()]),
        last_ran: Type.Union([Type.String(), Type.Null()]),
        last_spawn_error: Type.Union([Type.String(), Type.Null()]),
      }),
      Type.Null(),
    ],
    { description: 'Cron triggers: the next and last run (null without cron triggers)' },
  ),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
});
export type AutomationItem = Static<typeof AutomationItem>;

export const AutomationList = Type.Object({
  automations: Type.Array(AutomationItem, { description: 'Sorted by name' }),
});

export const TestFilterBody = Type.Object(
  {
    webhook_uid: Type.String({ minLength: 1, maxLength: 64, description: 'The webhook the stored delivery came to' }),
    delivery_id: Type.String({ minLength: 1, maxLength: 300 }),
    filter: Type.Optional(WebhookFilter),
    automation_id: Type.Optional(
      Type.String({ maxLength: 64, description: "Test a saved automation's webhook triggers instead of filter" }),
    ),
  },
  { additionalProperties: false },
);
export type TestFilterBody = Static<typeof TestFilterBody>;

const Check = Type.Object({ passed: Type.Boolean(), detail: Type.String() });
export const TestFilterResult = Type.Object({
  would_trigger: Type.Boolean(),
  webhook_check: Check,
  payload_check: Check,
});
export type TestFilterResult = Static<typeof TestFilterResult>;

export const FIRINGS_SHOWN = 100;

export const AutomationFiring = Type.Object({
  fired_at: Type.String({ format: 'date-time' }),
  source: Type.Union([Type.Literal('webhook'), Type.Literal('github')], {
    description: "webhook: a delivery to one of the team's webhooks; github: a delivery of the GitHub App",
  }),
  delivery_id: Type.Union([Type.String(), Type.Null()], {
    description: "The webhook delivery's ID, or GitHub's X-GitHub-Delivery",
  }),
  webhook_uid: Type.Union([Type.String(), Type.Null()], { description: 'webhook firings: the webhook' }),
  github_event: Type.Union([Type.String(), Type.Null()], { description: 'github firings: mention, label or review' }),
  run_id: Type.Union([Type.String(), Type.Null()], { description: 'The run started; null when none could be' }),
  error: Type.Union([Type.String(), Type.Null()], { description: 'Why no run started' }),
});
export type AutomationFiring = Static<typeof AutomationFiring>;
export const AutomationFirings = Type.Object({
  firings: Type.Array(AutomationFiring, { description: `Newest first, at most ${FIRINGS_SHOWN}` }),
});
