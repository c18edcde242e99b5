import { type Static, Type } from 'typebox';
import { FACTORY_UID_PATTERN } from './uid.js';

/**
 * The factory as the public factory API shows it (GET /factory, GET /factory/{uid}). Hangar's factories hold
 * webhooks, automations, agents and skills; what the public shape has beyond that (an alias, an avatar, forge
 * integrations, defaults Hangar keeps on environments and agents instead) is there with the value that says "none".
 */
const Forge = Type.Union([
  Type.Literal('GITHUB'),
  Type.Literal('GITLAB'),
  Type.Literal('AZURE_DEVOPS'),
  Type.Literal('NONE'),
]);

export const PublicFactory = Type.Object({
  uid: Type.String({ pattern: FACTORY_UID_PATTERN }),
  name: Type.String(),
  description: Type.Union([Type.String(), Type.Null()]),
  team_uid: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
  is_default: Type.Boolean({ description: 'Hangar: webhooks and automations created without factory_uid go here' }),
  foreman_agent: Type.Union([Type.String(), Type.Null()], {
    description: "Hangar: the factory's agent named `foreman` (agents/foreman/agent.md), which takes dispatched runs",
  }),
  alias: Type.Null(),
  avatar_url: Type.Null(),
  code_forge: Forge,
  code_forges: Type.Array(Forge),
  credential_strategy: Type.Union([Type.Literal('CREATOR'), Type.Literal('EXECUTOR')]),
  default_environment: Type.Null(),
  default_model: Type.Null(),
  integrations: Type.Null(),
  repositories: Type.Array(Type.Object({ owner: Type.String(), repo: Type.String() })),
  agent_defaults: Type.Object({
    default_runner_uid: Type.String(),
    mcp_servers: Type.Record(Type.String(), Type.Unknown()),
    secrets: Type.Array(Type.Object({ name: Type.String() })),
    worker_host: Type.String(),
  }),
  scorer_defaults: Type.Object({}),
  scoring: Type.Object({ default_model: Type.Null() }),
});
export type PublicFactory = Static<typeof PublicFactory>;

export const PublicFactoryList = Type.Object({
  factories: Type.Array(PublicFactory, { description: 'Sorted by name; every match on one page' }),
  page_info: Type.Object({ has_next_page: Type.Boolean() }),
});

export const FactorySearchQuery = Type.Object({
  search: Type.Optional(Type.String({ maxLength: 200, description: 'Case-insensitive substring of the factory name' })),
  cursor: Type.Optional(
    Type.String({ maxLength: 200, description: 'Accepted for clients that page; one page holds all' }),
  ),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500 })),
});

export const FactoryUidParams = Type.Object({ uid: Type.String({ pattern: FACTORY_UID_PATTERN }) });

/** `<source>:<id>`, e.g. linear:ENG-123 (metadata values are at most 256 bytes, so is the URL). */
export const TICKET_REF_PATTERN = '^[a-z][a-z0-9_-]{0,31}:[A-Za-z0-9._-]{1,200}$';

export const DispatchBody = Type.Object(
  {
    prompt: Type.String({ minLength: 1, maxLength: 100_000, description: 'Sent to the foreman as it is' }),
    title: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
    ticket_ref: Type.Optional(
      Type.String({
        pattern: TICKET_REF_PATTERN,
        description: 'The ticket in `<source>:<id>` form; omitted, an `adhoc:` reference is made',
      }),
    ),
    ticket_url: Type.Optional(Type.String({ format: 'uri', maxLength: 256 })),
  },
  { additionalProperties: false },
);
export type DispatchBody = Static<typeof DispatchBody>;

export const DispatchResponse = Type.Object({
  factory_uid: Type.String(),
  foreman_agent: Type.String({ description: "The foreman's name, empty when the factory has none" }),
  run_id: Type.String(),
  state: Type.String({ description: 'The run state (QUEUED, PENDING, ...)' }),
  ticket_ref: Type.String(),
  run_url: Type.String({ format: 'uri', description: "The run's page in the dashboard" }),
});
export type DispatchResponse = Static<typeof DispatchResponse>;
