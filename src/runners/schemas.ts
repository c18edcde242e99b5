import { type Static, Type } from 'typebox';
import { literalUnion } from '../platform/http/literal-union.js';

/** Wire schemas of runners: a team's named sandbox kind and shape that runs execute with (issue 52, field 3). */

export const RunnerLimits = Type.Object(
  {
    cpus: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 1024, description: 'CPUs, e.g. 1.5' })),
    memory: Type.Optional(Type.String({ minLength: 1, maxLength: 32, description: 'A size, e.g. 512m or 4g' })),
    pids: Type.Optional(Type.Integer({ minimum: 16, maximum: 1_000_000, description: 'Processes and threads' })),
  },
  {
    additionalProperties: false,
    description:
      "Each at most the operator's maximum (HANGAR_RUN_CPUS_MAX, HANGAR_RUN_MEMORY_MAX, HANGAR_RUN_PIDS_MAX); one left out takes the environment's limit, else the operator's default",
  },
);
export type RunnerLimits = Static<typeof RunnerLimits>;

export const RunnerKubernetes = Type.Object(
  {
    runtime_class_name: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 253,
        description:
          "The run pods' runtimeClassName: HANGAR_KUBERNETES_RUNTIME_CLASS or one of HANGAR_RUNNER_RUNTIME_CLASSES",
      }),
    ),
    pod_template: Type.Optional(
      Type.Object(
        {},
        {
          additionalProperties: true,
          description:
            "A pod template merged under Hangar's own: only spec.nodeSelector, spec.tolerations, spec.affinity, spec.topologySpreadConstraints and spec.priorityClassName (placement, never what the pod may do)",
        },
      ),
    ),
  },
  { additionalProperties: false, description: 'Only for a runner whose sandbox is kubernetes.' },
);
export type RunnerKubernetes = Static<typeof RunnerKubernetes>;

/** The sandbox kinds a runner may name (HANGAR_SANDBOX's values but auto). */
export const RUNNER_SANDBOXES = ['bwrap', 'process', 'container', 'kubernetes'] as const;

const Sandbox = literalUnion(RUNNER_SANDBOXES, {
  description: "The sandbox kind; it must be the one this server runs (left out: the server's)",
});

export const RunnerBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100, description: 'Unique in the team' }),
    description: Type.Optional(Type.String({ maxLength: 2000 })),
    sandbox: Type.Optional(Sandbox),
    limits: Type.Optional(RunnerLimits),
    kubernetes: Type.Optional(RunnerKubernetes),
  },
  { additionalProperties: false, description: 'A runner; a PUT replaces all of it.' },
);
export type RunnerBody = Static<typeof RunnerBody>;

/** What a runner gives a run: stored with the runner, and recorded on each run that resolves to it. */
export const RunnerShape = Type.Object({
  sandbox: Type.Optional(Sandbox),
  limits: Type.Optional(RunnerLimits),
  kubernetes: Type.Optional(RunnerKubernetes),
});
export type RunnerShape = Static<typeof RunnerShape>;

export const RunnerItem = Type.Object({
  uid: Type.String({
    description:
      "22 characters of [A-Za-z0-9]; a run's config.runner_id, an agent's or environment's default_runner_uid",
  }),
  name: Type.String(),
  description: Type.String(),
  sandbox: Type.Optional(Sandbox),
  limits: Type.Optional(RunnerLimits),
  kubernetes: Type.Optional(RunnerKubernetes),
  factory_uid: Type.Optional(
    Type.String({ description: 'The factory whose definition manages it (runners/<name>.yaml)' }),
  ),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
});
export type RunnerItem = Static<typeof RunnerItem>;

export const RunnerList = Type.Object({
  runners: Type.Array(RunnerItem),
  default: Type.Object(
    {
      sandbox: Type.String({ description: 'The sandbox kind this server runs (HANGAR_SANDBOX)' }),
      limits: Type.Object({ cpus: Type.Number(), memory: Type.String(), pids: Type.Integer() }),
      maximums: Type.Object({ cpus: Type.Number(), memory: Type.String(), pids: Type.Integer() }),
    },
    { description: "The operator's default: what a run that resolves to no runner executes with" },
  ),
});
export type RunnerList = Static<typeof RunnerList>;

export const RunnerParams = Type.Object({ uid: Type.String({ minLength: 1, maxLength: 64 }) });
