import { type Static, Type } from 'typebox';
import { BUILT_IN_HARNESSES } from '../../models/index.js';
import { literalUnion } from '../../platform/http/literal-union.js';
import { AGENT_TYPES } from '../tables.js';

/** Wire schemas of agent identities: agents a team owns that can execute runs. */

const Harness = Type.Object({
  type: Type.Optional(Type.Union(BUILT_IN_HARNESSES.map((value) => Type.Literal(value)))),
  model_id: Type.Optional(Type.String({ maxLength: 200 })),
  reasoning_level: Type.Optional(Type.String({ maxLength: 50 })),
});
const SecretRef = Type.Object({ name: Type.String({ minLength: 1, maxLength: 128 }) });
const McpServers = Type.Record(Type.String(), Type.Object({}, { additionalProperties: true }));

const Name = Type.String({ minLength: 1, maxLength: 200 });
const Description = Type.String({ maxLength: 2000 });
const Prompt = Type.String({ maxLength: 100_000 });
const EnvironmentId = Type.String({ maxLength: 64 });
const Model = Type.String({ maxLength: 200 });
const WorkerHost = Type.String({ maxLength: 200 });
const Skills = Type.Array(Type.String({ maxLength: 1024 }), { maxItems: 50 });
const Secrets = Type.Array(SecretRef, { maxItems: 50 });

const DefaultRunner = Type.String({
  maxLength: 64,
  description:
    "The runner (GET /runners) of the runs this agent executes when a run names none (config.runner_id); it wins over the environment's default. Empty: none.",
});

const AgentType = literalUnion(AGENT_TYPES, {
  description: "What the agent is for; a factory's FOREMAN takes the work sent to the factory. Default CUSTOM.",
});
const HarnessAuthSecrets = Type.Object(
  {
    claude_auth_secret_name: Type.Optional(Type.String({ maxLength: 128 })),
    codex_auth_secret_name: Type.Optional(Type.String({ maxLength: 128 })),
  },
  {
    description:
      'Team secrets its runs of the claude or codex harness sign in with (only the harness run gets its own)',
  },
);
const CredentialStrategy = Type.Union([Type.Literal('CREATOR'), Type.Literal('EXECUTOR')], {
  description:
    "Whose GitHub identity its runs' tokens stand for when a run's config names none: EXECUTOR (the default: the team's GitHub access) or CREATOR (the member who created the run, where GitHub maps one)",
});

const OnBehalfOf = Type.Boolean({
  description:
    "The agent's API key may create runs with `on_behalf_of` a member of the team (creator: the member; executor: the agent). Default false.",
});

export const CreateAgentBody = Type.Object({
  on_behalf_of_enabled: Type.Optional(OnBehalfOf),
  agent_type: Type.Optional(AgentType),
  harness_auth_secrets: Type.Optional(HarnessAuthSecrets),
  credential_strategy: Type.Optional(Type.Union([CredentialStrategy, Type.Null()])),
  name: Name,
  description: Type.Optional(Description),
  prompt: Type.Optional(Prompt),
  environment_id: Type.Optional(EnvironmentId),
  base_model: Type.Optional(Model),
  worker_host: Type.Optional(WorkerHost),
  skills: Type.Optional(Skills),
  secrets: Type.Optional(Secrets),
  mcp_servers: Type.Optional(McpServers),
  harness: Type.Optional(Harness),
  default_runner_uid: Type.Optional(DefaultRunner),
});
export type CreateAgentBody = Static<typeof CreateAgentBody>;

const orNull = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) =>
  Type.Optional(Type.Union([schema, Type.Null()]));

/** Omitted or null: unchanged. Empty (string, list or object): cleared. */
export const UpdateAgentBody = Type.Object({
  on_behalf_of_enabled: orNull(OnBehalfOf),
  agent_type: orNull(AgentType),
  harness_auth_secrets: orNull(HarnessAuthSecrets),
  credential_strategy: orNull(Type.Union([CredentialStrategy, Type.Literal('')])),
  name: orNull(Name),
  description: orNull(Description),
  prompt: orNull(Prompt),
  environment_id: orNull(EnvironmentId),
  base_model: orNull(Model),
  worker_host: orNull(WorkerHost),
  skills: orNull(Skills),
  secrets: orNull(Secrets),
  mcp_servers: orNull(McpServers),
  harness: orNull(Harness),
  default_runner_uid: orNull(DefaultRunner),
});
export type UpdateAgentBody = Static<typeof UpdateAgentBody>;

export const AgentListQuery = Type.Object({
  factory_uid: Type.Optional(
    Type.Union([Type.String({ maxLength: 64 }), Type.Array(Type.String({ maxLength: 64 }), { maxItems: 20 })], {
      description: 'Only the agents these factories manage (repeatable)',
    }),
  ),
});

export const AgentUidParams = Type.Object({ uid: Type.String({ minLength: 1, maxLength: 64 }) });

export const AgentItem = Type.Object({
  uid: Type.String(),
  name: Type.String(),
  description: Type.Optional(Type.String()),
  prompt: Type.Optional(Type.String()),
  environment_id: Type.Optional(Type.String()),
  base_model: Type.Optional(Type.String()),
  worker_host: Type.Optional(Type.String()),
  skills: Type.Array(Type.String()),
  secrets: Type.Array(SecretRef),
  mcp_servers: Type.Optional(McpServers),
  harness: Type.Optional(Harness),
  available: Type.Boolean({ description: 'Within the team plan limit: may execute runs.' }),
  on_behalf_of_enabled: OnBehalfOf,
  agent_type: AgentType,
  harness_auth_secrets: Type.Optional(HarnessAuthSecrets),
  credential_strategy: Type.Optional(CredentialStrategy),
  default_runner_uid: DefaultRunner,
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
});
export type AgentItem = Static<typeof AgentItem>;

export const AgentList = Type.Object({ agents: Type.Array(AgentItem) });
