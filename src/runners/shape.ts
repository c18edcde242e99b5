import { limitProblem } from '../environments/index.js';
import type { RunnerBody, RunnerKubernetes, RunnerShape } from './schemas.js';

/** What the server lets a runner ask for: its own sandbox kind, its maxima and the runtime classes it allows. */
export interface RunnerPolicy {
  /** The sandbox kind this server runs (HANGAR_SANDBOX as resolved). */
  sandbox: string;
  /** HANGAR_RUN_MEMORY_MAX, HANGAR_RUN_CPUS_MAX, HANGAR_RUN_PIDS_MAX. */
  maximums: { memoryBytes: number; cpus: number; pids: number };
  /** HANGAR_KUBERNETES_RUNTIME_CLASS and HANGAR_RUNNER_RUNTIME_CLASSES: the only runtime classes a runner may name. */
  runtimeClasses: string[];
  /** This server's runs are Kubernetes pods: the only sandbox a runtime class or a pod template means anything to. */
  runsInPods: boolean;
}

/**
 * The pod spec fields a team's runner may set: where its pods are placed. Anything else (volumes, host namespaces,
 * a service account, security contexts, containers) would be a team deciding what its hostile code may do on a node;
 * that stays the operator's (HANGAR_KUBERNETES_POD_TEMPLATE).
 */
const PLACEMENT_FIELDS = ['nodeSelector', 'tolerations', 'affinity', 'topologySpreadConstraints', 'priorityClassName'];

/** A DNS subdomain, as Kubernetes names a RuntimeClass. */
const RUNTIME_CLASS = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Checks a create or update body against the server's policy; the shape to store, or the first problem (a 400). */
export function checkRunner(body: RunnerBody, policy: RunnerPolicy): { shape: RunnerShape } | { problem: string } {
  if (body.name.trim() === '') return { problem: 'name must not be blank' };
  if (body.sandbox !== undefined && body.sandbox !== policy.sandbox)
    return {
      problem: `sandbox "${body.sandbox}" is not a kind this server runs: it runs ${policy.sandbox} sandboxes (HANGAR_SANDBOX); leave sandbox out or name ${policy.sandbox}`,
    };
  const limitsProblem = body.limits ? limitProblem(body.limits, policy.maximums) : undefined;
  if (limitsProblem) return { problem: limitsProblem };
  if (body.kubernetes && Object.keys(body.kubernetes).length > 0) {
    if (!policy.runsInPods)
      return { problem: `kubernetes settings go with the kubernetes sandbox; this server runs ${policy.sandbox}` };
    const problem = kubernetesProblem(body.kubernetes, policy);
    if (problem) return { problem };
  }
  return {
    shape: {
      ...(body.sandbox !== undefined ? { sandbox: body.sandbox } : {}),
      ...(body.limits && Object.keys(body.limits).length > 0 ? { limits: { ...body.limits } } : {}),
      ...(body.kubernetes && Object.keys(body.kubernetes).length > 0 ? { kubernetes: { ...body.kubernetes } } : {}),
    },
  };
}

function kubernetesProblem(kubernetes: RunnerKubernetes, policy: RunnerPolicy): string | undefined {
  const runtimeClass = kubernetes.runtime_class_name;
  if (runtimeClass !== undefined) {
    if (!RUNTIME_CLASS.test(runtimeClass))
      return `kubernetes.runtime_class_name "${runtimeClass}" is not a RuntimeClass name (lower-case letters, digits, - and .)`;
    if (!policy.runtimeClasses.includes(runtimeClass))
      return policy.runtimeClasses.length === 0
        ? `kubernetes.runtime_class_name: this server lets runners name no runtime class (HANGAR_RUNNER_RUNTIME_CLASSES)`
        : `kubernetes.runtime_class_name "${runtimeClass}" is not one this server allows: ${policy.runtimeClasses.join(', ')} (HANGAR_RUNNER_RUNTIME_CLASSES)`;
  }
  const template = kubernetes.pod_template as Record<string, unknown> | undefined;
  if (template === undefined) return undefined;
  const outside = Object.keys(template).filter((key) => key !== 'spec');
  if (outside.length > 0)
    return `kubernetes.pod_template may hold only spec (placement), not ${outside.join(', ')}; labels, annotations and the rest are the operator's (HANGAR_KUBERNETES_POD_TEMPLATE)`;
  const spec = template.spec;
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec))
    return 'kubernetes.pod_template.spec must be an object';
  const refused = Object.keys(spec).filter((key) => !PLACEMENT_FIELDS.includes(key));
  if (refused.length > 0)
    return `kubernetes.pod_template.spec may set only ${PLACEMENT_FIELDS.join(', ')}, not ${refused.join(', ')}: what a run pod may do is the operator's (HANGAR_KUBERNETES_POD_TEMPLATE)`;
  return undefined;
}

/** The runner a run resolved to, as recorded in its agent_config (`runner_id`, `runner`). */
export interface RecordedRunner extends RunnerShape {
  name: string;
}

/** What an execution takes of its run's runner: the limits to ask for and, for pods, the runtime class and placement. */
export interface ExecutionShape {
  /** The runner's limits over the environment's, field by field; the backend keeps them within its maxima. */
  limits: { memory?: string; cpus?: number; pids?: number } | undefined;
  runtimeClassName?: string;
  /** The operator's pod template with the runner's placement over it. */
  podTemplate?: Record<string, unknown>;
}

function recordedRunner(agentConfig: Record<string, unknown>): RecordedRunner | undefined {
  const runner = agentConfig.runner;
  return typeof runner === 'object' && runner !== null && !Array.isArray(runner)
    ? (runner as RecordedRunner)
    : undefined;
}

/**
 * THE execution side's one look at a run's runner (the sandbox phase, the Kubernetes planner): the shape recorded on
 * the run at its creation, checked against the sandbox that executes it (`kind`). A runner naming another kind (the
 * operator changed HANGAR_SANDBOX since, or a worker runs another) is the run's failure, in words, not a run in a
 * sandbox its owner did not choose. No runner: the environment's limits, as before runners.
 */
export function executionShape(
  agentConfig: Record<string, unknown>,
  environmentLimits: ExecutionShape['limits'],
  kind: string,
  operatorPodTemplate?: Record<string, unknown>,
): ExecutionShape | { problem: string } {
  const runner = recordedRunner(agentConfig);
  if (!runner) return { limits: environmentLimits };
  if (runner.sandbox !== undefined && runner.sandbox !== kind)
    return {
      problem: `The run's runner ${runner.name} names the ${runner.sandbox} sandbox, but it executes where the sandbox is ${kind}; change the runner's sandbox or run it on a server of that kind`,
    };
  const limits = { ...(environmentLimits ?? {}), ...(runner.limits ?? {}) };
  const placement = runner.kubernetes?.pod_template as { spec?: Record<string, unknown> } | undefined;
  return {
    limits: Object.keys(limits).length > 0 ? limits : undefined,
    ...(runner.kubernetes?.runtime_class_name ? { runtimeClassName: runner.kubernetes.runtime_class_name } : {}),
    ...(placement?.spec ? { podTemplate: withPlacement(operatorPodTemplate ?? {}, placement.spec) } : {}),
  };
}

/** The operator's template with a runner's placement: node selectors merged, tolerations added, the rest replaced. */
function withPlacement(operator: Record<string, unknown>, placement: Record<string, unknown>): Record<string, unknown> {
  const spec = (operator.spec ?? {}) as Record<string, unknown>;
  const merged: Record<string, unknown> = { ...spec, ...placement };
  if (placement.nodeSelector || spec.nodeSelector)
    merged.nodeSelector = { ...((spec.nodeSelector as object) ?? {}), ...((placement.nodeSelector as object) ?? {}) };
  if (placement.tolerations || spec.tolerations)
    merged.tolerations = [...((spec.tolerations as unknown[]) ?? []), ...((placement.tolerations as unknown[]) ?? [])];
  return { ...operator, spec: merged };
}
