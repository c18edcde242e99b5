import { type Static, Type } from 'typebox';
import { EnvironmentNetwork, NetworkBody } from '../network/index.js';

/** Wire schemas of the environments slice: one source for validation, TypeScript types and the OpenAPI document. */

const GithubRepo = Type.Object(
  {
    owner: Type.String({ maxLength: 39, description: 'GitHub user or organisation' }),
    repo: Type.String({ maxLength: 100, description: 'Repository name' }),
  },
  { additionalProperties: false },
);

/** Whether setup runs again when a run starts from a setup snapshot whose repositories have moved on. */
export const SetupOnUpdate = Type.Union(
  [Type.Literal('always'), Type.Literal('never'), Type.Literal('when_lockfiles_change')],
  {
    description:
      'When a run starts from the newest setup snapshot and its repositories have new commits: run setup again ' +
      'always, never, or only when a lockfile changed (the default)',
  },
);
export type SetupOnUpdate = Static<typeof SetupOnUpdate>;
/** What an environment's runs ask of the container sandbox, each within the operator's maximum. */
export const EnvironmentLimits = Type.Object(
  {
    memory: Type.Optional(
      Type.String({ minLength: 1, maxLength: 32, description: 'e.g. `512m`, `4g` (powers of 1024)' }),
    ),
    cpus: Type.Optional(Type.Number({ minimum: 0.01, maximum: 1024 })),
    pids: Type.Optional(
      Type.Integer({ minimum: 16, maximum: 1_000_000, description: 'Processes and threads at once' }),
    ),
  },
  {
    additionalProperties: false,
    description:
      "Container limits for this environment's runs (HANGAR_SANDBOX=container), each at most the operator's maximum (HANGAR_RUN_MEMORY_MAX, HANGAR_RUN_CPUS_MAX, HANGAR_RUN_PIDS_MAX); one left out takes the operator's default",
  },
);
export type EnvironmentLimits = Static<typeof EnvironmentLimits>;

/** The environment's GitHub defaults for its runs; a run's own `config.github` wins over them. */
export const EnvironmentGitHub = Type.Object(
  {
    pull_request: Type.Optional(
      Type.Union([Type.Literal('open'), Type.Literal('draft'), Type.Literal('off')], {
        description:
          "What Hangar does when a run ends SUCCEEDED with changes, unless the run's config.github.pull_request says otherwise: open a pull request (`open`, the default), open it as a draft, or leave the changes (`off`)",
      }),
    ),
  },
  {
    additionalProperties: false,
    description: "Hangar's GitHub defaults for this environment's runs (docs/github.md); a run's config.github wins",
  },
);
export type EnvironmentGitHub = Static<typeof EnvironmentGitHub>;

export const EnvironmentConfigBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    description: Type.Optional(Type.Union([Type.String({ maxLength: 2000 }), Type.Null()])),
    docker_image: Type.Optional(
      Type.String({ minLength: 1, maxLength: 255, description: 'e.g. `ubuntu:24.04` or `registry/repo:tag`' }),
    ),
    github_repos: Type.Optional(
      Type.Array(GithubRepo, { maxItems: 50, description: 'Repositories cloned into the workspace' }),
    ),
    setup_commands: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 10_000 }), { maxItems: 100 })),
    failure_session_retention_minutes: Type.Optional(
      Type.Union([Type.Integer({ minimum: 1, maximum: 60 }), Type.Null()], {
        description: 'How long a sandbox whose setup failed is kept for debugging; null keeps none',
      }),
    ),
    setup_on_update: Type.Optional(SetupOnUpdate),
    limits: Type.Optional(EnvironmentLimits),
    registry_secret_name: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description:
          "A team secret holding `username:password` (or token) for docker_image's registry; used by the server to pull, never given to the run",
      }),
    ),
    github: Type.Optional(EnvironmentGitHub),
    network: Type.Optional(NetworkBody),
    default_runner_uid: Type.Optional(
      Type.String({
        maxLength: 64,
        description:
          "A runner of the owning team (GET /runners): the shape of this environment's runs that name no runner and whose agent has no default. Empty: none.",
      }),
    ),
  },
  { additionalProperties: false, description: 'Environment configuration; a PUT replaces all of it.' },
);
export type EnvironmentConfigBody = Static<typeof EnvironmentConfigBody>;

export const EnvironmentConfig = Type.Object({
  name: Type.String(),
  description: Type.String(),
  docker_image: Type.Optional(Type.String()),
  github_repos: Type.Array(Type.Object({ owner: Type.String(), repo: Type.String() })),
  setup_commands: Type.Array(Type.String()),
  failure_session_retention_minutes: Type.Union([Type.Integer(), Type.Null()]),
  setup_on_update: Type.Optional(SetupOnUpdate),
  limits: Type.Optional(EnvironmentLimits),
  registry_secret_name: Type.Optional(Type.String()),
  github: Type.Optional(EnvironmentGitHub),
  network: Type.Optional(EnvironmentNetwork),
  default_runner_uid: Type.Optional(Type.String()),
});
export type EnvironmentConfig = Static<typeof EnvironmentConfig>;

export type AccessKind = 'owner' | 'guest' | 'link';

const Sharing = Type.Object(
  {
    guests: Type.Array(
      Type.Object({
        team_uid: Type.String(),
        team_name: Type.String(),
        via: Type.Union([Type.Literal('guest'), Type.Literal('link')]),
        since: Type.String({ format: 'date-time' }),
      }),
    ),
    link_active: Type.Boolean({ description: 'Whether a share link exists (its token is shown only when made)' }),
  },
  { description: 'Who else may use the environment; shown to the owning team only.' },
);

/** A user or an agent identity (service_account), as Oz names the principals of a resource. */
const principal = (description: string) =>
  Type.Object(
    {
      type: Type.Union([Type.Literal('user'), Type.Literal('service_account')]),
      uid: Type.String(),
      display_name: Type.Optional(Type.String()),
      email: Type.Optional(Type.String()),
    },
    { description },
  );

export const EnvironmentItem = Type.Object({
  uid: Type.String({ description: '22 characters of [A-Za-z0-9]' }),
  config: EnvironmentConfig,
  last_updated: Type.String({ format: 'date-time' }),
  setup_failed: Type.Boolean(),
  last_task_run_timestamp: Type.Optional(
    Type.String({ format: 'date-time', description: 'Latest start of a run in it' }),
  ),
  last_task_created: Type.Optional(Type.String({ format: 'date-time', description: 'Latest creation of a run in it' })),
  scope: Type.Object({ type: Type.Literal('Team'), uid: Type.String({ description: 'The owning team' }) }),
  creator: Type.Optional(principal('Who made it')),
  last_editor: Type.Optional(principal('Who last changed its config; its creator until someone does')),
  access: Type.Union([Type.Literal('owner'), Type.Literal('guest'), Type.Literal('link')], {
    description: "How the caller's team reaches it: it owns it, was added as a guest, or joined with the share link",
  }),
  created_at: Type.String({ format: 'date-time' }),
  sharing: Type.Optional(Sharing),
  snapshot: Type.Optional(
    Type.Object(
      {
        key: Type.String({ description: 'The start of the snapshot key (image, commits, setup commands)' }),
        size_bytes: Type.Integer(),
        created_at: Type.String({ format: 'date-time' }),
        age_seconds: Type.Integer(),
      },
      {
        description:
          "Hangar's own extra field (the interface leaves an environment's other fields open): the newest setup " +
          "snapshot a run of the caller's team would start from; absent when there is none",
      },
    ),
  ),
});
export type EnvironmentItem = Static<typeof EnvironmentItem>;

export const ListEnvironmentsQuery = Type.Object({
  sort_by: Type.Union([Type.Literal('name'), Type.Literal('last_updated')], { default: 'last_updated' }),
});
export type ListEnvironmentsQuery = Static<typeof ListEnvironmentsQuery>;

export const ListEnvironmentsResponse = Type.Object({ environments: Type.Array(EnvironmentItem) });

/** No pattern here: a malformed uid names no environment and gets the same 404 as an unknown one. */
export const EnvironmentParams = Type.Object({ uid: Type.String({ maxLength: 200 }) });
export const GuestParams = Type.Object({
  uid: Type.String({ maxLength: 200 }),
  team_uid: Type.String({ maxLength: 200 }),
});

export const AddGuestBody = Type.Object(
  { team_uid: Type.String({ minLength: 1, maxLength: 200 }) },
  { additionalProperties: false },
);

export const ShareLinkResponse = Type.Object({
  environment_uid: Type.String(),
  token: Type.String({ description: 'Shown once; POST again to replace it, which invalidates this one' }),
});

export const GuestSecretsItem = Type.Object(
  {
    environment_uid: Type.String(),
    owner_team_uid: Type.String({ description: 'The team that owns the environment (and writes its setup)' }),
    secrets_allowed: Type.Boolean({
      description: "Whether this team's runs in the environment may use this team's secrets",
    }),
    allowed_at: Type.Optional(Type.String({ format: 'date-time' })),
    allowed_by: Type.Optional(Type.String({ description: 'The admin who allowed it' })),
  },
  { description: "A guest team's consent to its secrets in an environment another team shares (docs/environments.md)" },
);
export type GuestSecretsItem = Static<typeof GuestSecretsItem>;

/**
 * What a run is prepared from: the config, and for a run of a team that does not own the environment, whose it is
 * and whether the run's team allowed its secrets there. Never part of the API's answers.
 */
export type EnvironmentForRun = EnvironmentConfig & {
  guest_run?: { owner_team_uid: string; secrets_allowed: boolean };
};

export const JoinBody = Type.Object(
  { token: Type.String({ minLength: 1, maxLength: 200 }) },
  { additionalProperties: false },
);

export const RebuildResponse = Type.Object({
  environment_uid: Type.String(),
  snapshots_dropped: Type.Integer({ description: 'Setup snapshots dropped: the next run sets up from nothing' }),
});
