import fs from 'node:fs';
import type { KubernetesSettings } from '../../config-kubernetes.js';
import { executionShape } from '../../runners/index.js';
import type { ClaimedRun } from '../../runs/index.js';
import type { EnvironmentSetups } from '../run/ledger.js';
import type { ContainerLimits } from '../sandbox/container/limits.js';
import type { ExecutionCredentials } from './credential.js';
import type { ExecutionJobRequest } from './job-spec.js';

/** What the planner needs of the server's configuration (config.ts), besides the Kubernetes settings. */
export interface PlannerOptions {
  settings: KubernetesSettings;
  environments: EnvironmentSetups;
  readSecret: (teamUid: string, name: string) => Promise<string | null>;
  credentials: ExecutionCredentials;
  /** The server as run pods reach it (HANGAR_KUBERNETES_SERVER_URL, else the public address). */
  serverUrl: () => string;
  defaultImage: string;
  defaults: ContainerLimits;
  maximums: ContainerLimits;
  setupTimeoutMinutes: number;
  setupNetwork: boolean;
  /** The longest time limit of the harnesses this server knows, in minutes (the run's harness is decided in the pod). */
  harnessTimeoutMinutes: number;
  /** The harness of a run that names none gets network (HANGAR_HARNESS_NETWORK and the like). */
  harnessNetwork: boolean;
  /** The operator's model keys, by variable: the pod's worker runs the same harnesses with them. */
  modelCredentials: Record<string, string>;
  /** HANGAR_CONFIG, read once per execution: its harnesses are the pod worker's too. */
  operatorFile: string | undefined;
  owner: string;
}

/** Time a pod may take to start and clone, beyond the setup and harness limits, before its Job is stopped. */
const START_MARGIN_SECONDS = 300;

/**
 * Turns a claimed run into the request for its Job: the image, limits, deadline, network and credentials, resolved
 * as the other backends resolve them, and the shape of the run's runner (its limits over the environment's, its
 * runtime class, its placement within the operator's pod template). A problem the run's owner must fix (a registry
 * secret that does not exist, a runner of another sandbox kind) comes back as a message: the run fails its setup
 * with it.
 */
export async function planExecution(
  options: PlannerOptions,
  run: ClaimedRun,
): Promise<ExecutionJobRequest | { problem: string }> {
  const environment =
    run.environment_id === null ? undefined : await options.environments.setupFor(run.team_uid, run.environment_id);
  // The runner recorded on the run at its creation (runners/shape.ts), checked against this backend's kind.
  const shape = executionShape(run.agent_config, environment?.limits, 'kubernetes', options.settings.podTemplate);
  if ('problem' in shape) return { problem: shape.problem };
  let registryCredentials: string | undefined;
  if (environment?.registry_secret_name && run.environment_id !== null) {
    // In the team that owns the environment: a shared environment's credentials are its owner's (issue 47.3a).
    const secret = await options.environments.registrySecretFor(run.team_uid, run.environment_id);
    const value = secret ? await options.readSecret(secret.teamUid, secret.name) : null;
    if (value === null)
      return {
        problem: `The environment's registry_secret_name names the team secret ${environment.registry_secret_name}, which does not exist in the team that owns the environment`,
      };
    if (value.indexOf(':') <= 0)
      return {
        problem: `The team secret ${environment.registry_secret_name} (the environment's registry credentials) must be username:password`,
      };
    registryCredentials = value;
  }
  const setupCommands = environment?.setup_commands.length ?? 0;
  const repositories = environment?.github_repos.length ?? 0;
  const deadlineSeconds =
    (options.harnessTimeoutMinutes + options.setupTimeoutMinutes * Math.max(1, setupCommands)) * 60 +
    START_MARGIN_SECONDS;
  const operatorFile = options.operatorFile === undefined ? undefined : fs.readFileSync(options.operatorFile, 'utf8');
  return {
    settings: {
      ...options.settings,
      ...(shape.runtimeClassName ? { runtimeClassName: shape.runtimeClassName } : {}),
      ...(shape.podTemplate ? { podTemplate: shape.podTemplate } : {}),
    },
    runId: run.id,
    executionId: run.execution_id,
    image: environment?.docker_image ?? options.defaultImage,
    defaults: options.defaults,
    maximums: options.maximums,
    request: shape.limits,
    deadlineSeconds,
    serverUrl: options.serverUrl(),
    credential: options.credentials.issue(run.id, run.execution_id),
    // The pod's worker clones inside the pod: repositories need the git host as setup commands need their network.
    network: (setupCommands > 0 && options.setupNetwork) || repositories > 0 || options.harnessNetwork,
    ...(registryCredentials !== undefined ? { registryCredentials } : {}),
    secretEnv: options.modelCredentials,
    ...(operatorFile !== undefined ? { operatorFile } : {}),
    owner: options.owner,
  };
}
