import type { EnvironmentConfig } from '../../../environments/index.js';
import type { RunNetwork } from '../../../network/index.js';
import { environmentImageProblem } from '../../../platform/image-reference.js';
import { executionShape } from '../../../runners/index.js';
import type { Outcome } from '../../../runs/index.js';
import type { Harness } from '../../harnesses/harness.js';
import type { SandboxBackend, SandboxOpenRequest } from '../../sandbox/backend.js';
import { registryOf } from '../../sandbox/container/pull.js';
import { failed } from '../outcomes.js';
import type { Phase, RunScope } from './types.js';

/** Whether the sandbox was opened; if not, the run's outcome (null: stopped meanwhile). */
export type Opened = { ok: true } | { ok: false; outcome: Outcome | null };

/**
 * The execution's own sandbox (its container), where the backend holds one per execution: opened here for a run
 * without an environment, else by the environment's setup as it decides (a setup snapshot's image on a warm start,
 * the environment's otherwise). Undefined for a backend whose processes each stand alone.
 */
export async function openSandbox(
  scope: RunScope,
  workspace: string,
  environment: EnvironmentConfig | undefined,
  harness: Harness | undefined,
  network?: RunNetwork,
): Promise<Phase<ExecutionSandbox | undefined>> {
  const backend = scope.context.sandbox;
  // The run's runner (recorded at its creation) may name only the kind that executes it (runners/shape.ts).
  const shape = executionShape(scope.run.agent_config, environment?.limits, backend.kind);
  if ('problem' in shape) return { outcome: failed({ kind: 'sandbox_not_opened', message: shape.problem }) };
  if (!backend.capabilities.perExecution) return { continue: undefined };
  const sandbox = new ExecutionSandbox(scope, backend, workspace, environment, harness, network);
  if (scope.run.environment_id === null) {
    const opened = await sandbox.open();
    if (!opened.ok) return { outcome: opened.outcome };
  }
  return { continue: sandbox };
}

/** The limits the container asks for: the run's runner's over its environment's (checked in openSandbox). */
function runnerLimits(config: Record<string, unknown>, environment: EnvironmentConfig | undefined, kind: string) {
  const shape = executionShape(config, environment?.limits, kind);
  return !('problem' in shape) && shape.limits ? { limits: shape.limits } : {};
}

export class ExecutionSandbox {
  /** How long opening the first container took (its image pull included); a cold start's snapshot opens another. */
  pullMs: number | undefined;

  constructor(
    private readonly scope: RunScope,
    private readonly backend: SandboxBackend,
    private readonly workspace: string,
    private readonly environment: EnvironmentConfig | undefined,
    private readonly harness: Harness | undefined,
    /** The execution's network by phase: an environment that turned a phase off (or that could not be confined) has none. */
    private readonly network?: RunNetwork,
  ) {}

  /** Opens the container, from the environment's image or a setup snapshot's; it gets network when setup or the harness ask. */
  async open(snapshotImage?: string): Promise<Opened> {
    const { context, record, signal } = this.scope;
    const { environment } = this;
    const opening = performance.now();
    const phaseOn = (phase: 'setup' | 'agent') => this.network?.decision(phase).kind !== 'off';
    const setupNetwork =
      (environment?.setup_commands.length ?? 0) > 0 && context.workspaces.setupNetwork && phaseOn('setup');
    const image = snapshotImage ?? environment?.docker_image;
    // An environment saved before images were checked may still name an ID or a setup snapshot (issue 47.2).
    const imageProblem = !snapshotImage && image !== undefined ? environmentImageProblem(image) : undefined;
    if (imageProblem) return { ok: false, outcome: failed({ kind: 'image_refused', problem: imageProblem }) };
    let registryAuth: SandboxOpenRequest['registryAuth'];
    if (environment?.registry_secret_name && !snapshotImage) {
      const credentials = await this.registryCredentials(environment.registry_secret_name, image);
      if (typeof credentials === 'string')
        return { ok: false, outcome: failed({ kind: 'registry_credentials', message: credentials }) };
      registryAuth = credentials;
    }
    const opened = await this.backend.open({
      workspace: this.workspace,
      image,
      network: setupNetwork || (this.harness?.network === true && phaseOn('agent')),
      proxied: this.network?.decision('setup').kind === 'allow' || this.network?.decision('agent').kind === 'allow',
      ...runnerLimits(this.scope.run.agent_config, environment, this.backend.kind),
      ...(registryAuth ? { registryAuth } : {}),
      report: (type, payload) => record.event(type, payload),
    });
    if (signal.aborted) return { ok: false, outcome: null };
    if (!opened.ok) return { ok: false, outcome: failed({ kind: 'sandbox_not_opened', message: opened.message }) };
    record.later({ type: 'worker_container_ready', payload: { sandbox: context.sandbox.kind, ...opened.details } });
    this.pullMs ??= Math.round(performance.now() - opening);
    return { ok: true };
  }

  /** Ends the container and everything in it. */
  close(): Promise<void> {
    return this.backend.close(this.workspace);
  }

  /** Retires the container so that another can be opened for the workspace at once (elsewhere the same as close). */
  retire(): Promise<void> {
    return this.backend.retire(this.workspace);
  }

  /**
   * The registry credentials an environment names: its team secret, `username:password`, for the image's registry.
   * They go to the engine with the pull and nowhere else (never into the sandbox, a log or the timeline); a problem
   * comes back as the run's failure message, without the value.
   */
  private async registryCredentials(
    secretName: string,
    image: string | undefined,
  ): Promise<NonNullable<SandboxOpenRequest['registryAuth']> | string> {
    const { context, run, redactor } = this.scope;
    // In the team that owns the environment: a shared environment's credentials are its owner's (issue 47.3a).
    const value = run.environment_id
      ? await context.ledger.registrySecret(run.team_uid, run.environment_id, run.id)
      : undefined;
    if (value === undefined)
      return `The environment's registry_secret_name names the team secret ${secretName}, which does not exist in the team that owns the environment`;
    const colon = value.indexOf(':');
    if (colon <= 0)
      return `The team secret ${secretName} (the environment's registry credentials) must be username:password`;
    const password = value.slice(colon + 1);
    redactor.add(`registry secret ${secretName}`, password);
    return { username: value.slice(0, colon), password, serveraddress: registryOf(image ?? '') };
  }
}
