import { randomUUID } from 'node:crypto';
import { builtInSetup, type BuiltInSetup } from '../model/built-in-setup.js';
import { HarnessStartError, type Harness, type HarnessSession } from '../harnesses/harness.js';
import { requestedModelId } from '../../models/index.js';
import type { ExecutionContext } from './context.js';
import { startHarnessRun } from './harness-run.js';
import { outcomeOf } from './outcome.js';
import type { ClaimedRun, Outcome, RunState, TimelineEvent, Transition, TranscriptRow } from '../../runs/index.js';
import type { EnvironmentConfig } from '../../environments/index.js';
import { WorkspacePathError } from '../workspace/files.js';
import { LiveUsage } from '../model/live-usage.js';
import { activateModelMeter, ModelMeter } from '../model/meter.js';
import { withLogFields } from '../../platform/log-context.js';
import { contextOf, endSpan, inSpan, type Span, startSpan, withSpan } from '../../platform/tracing.js';
import { type CloneAccess, workspaceName } from '../workspace/workspace.js';
import type { PreparedEnvironment } from '../warm/warm-start.js';
import { GitHubSession } from '../github/session.js';
import { GitHubRefusal } from '../../github/index.js';
import { activateRedactor } from '../../platform/redaction/active.js';
import type { Redactor } from '../../platform/redaction/redactor.js';
import { addBuiltInSecrets, operatorRedactor, redactedContext } from '../redaction/index.js';
import { registryOf } from '../sandbox/container/pull.js';
import { guestRunOf, guestSecretsRefusal, withGuestGit, withholdsTeamSecrets } from './guest-run.js';
import { environmentImageProblem } from '../../platform/image-reference.js';
import type { SandboxOpenRequest } from '../sandbox/backend.js';
import { isDatabaseUnavailable } from '../../platform/db/sql-state.js';

/** How a run ends when the database went away after its agent may have started: nothing says what it did. */
const DATABASE_UNAVAILABLE = {
  message: 'The database was unavailable while the run was in progress; the run may be retried',
  error_code: 'resource_unavailable',
  retryable: true,
};

/** A workspace kept after a failed setup, handed to the debug sessions when the run has ended. */
export interface RetainedWorkspace {
  runId: string;
  /** The execution that failed its setup; debug turns take the next numbers. */
  executionId: number;
  teamUid: string;
  workspace: string;
  until: Date;
  retentionMinutes: number;
  harness: string | undefined;
  prompt: string;
  failure: string;
  agentConfig: Record<string, unknown>;
  conversationId: string;
}

/**
 * One execution of a claimed run, from PENDING to its end: workspace, environment setup, harness, outcome. A
 * cancel (or a lost lease) stops whatever step is in progress; the run's state is then someone else's to set.
 */
export class Execution {
  private readonly abort = new AbortController();
  private session: HarnessSession | undefined;
  private stopping = false;
  private reason: 'cancelled' | 'lost' | 'shutdown' | undefined;
  /** When this execution was claimed: a run end's log line gives its duration. */
  private readonly startedAt = Date.now();
  private agentStarted = false;
  /**
   * From just before its harness is spawned: the agent may have run, so this execution is never put back in the
   * queue (it would run a second time); it ends instead.
   */
  private agentMayHaveRun = false;
  /** The database was unavailable before anything of the agent ran: the run goes back to the queue (settle). */
  private unavailableBeforeAgent = false;
  private harnessExited = false;
  private delivery: Promise<void> = Promise.resolve();
  /** The harness's last transcript lines, written with the end (one write less per run). */
  private transcriptTail: TranscriptRow[] = [];
  /** The run's spend cap and what it had spent when it went past it: the harness is stopped, the run fails. */
  private overBudget: { cap: number; spent: number } | undefined;
  /** How the execution ends; written after the sandbox is cleaned up, so the timeline is complete at the end. */
  private outcome: Outcome | undefined;
  /** Removes the agent's model meter (see ModelMeter) from those the model proxy charges. */
  private releaseMeter: (() => void) | undefined;
  readonly done: Promise<void>;
  /** The run's secret values (the operator's keys, and what a built-in harness is given), kept out of all it writes. */
  private readonly redactor: Redactor;
  private readonly context: ExecutionContext;
  /** Its repositories' GitHub tokens and pull requests, when its team is linked to GitHub. */
  private github: GitHubSession | null = null;
  /** In a run in another team's environment: the agent's HOME, whose git runs with guestGitEnvironment. */
  private guestGitHome: string | undefined;
  /** The execution's span (tracing on): a child of what created the run, the parent of claim, setup, agent, end. */
  private readonly span: Span | undefined;

  constructor(
    context: ExecutionContext,
    private readonly run: ClaimedRun,
    /** Takes a workspace kept after a failed setup; without it (a worker), no workspace is kept. */
    private readonly onRetained?: (retained: RetainedWorkspace) => void,
    /** When the engine's claim of this run started (its claim span); a worker's claim happens here. */
    claimStarted?: Date,
  ) {
    this.redactor = operatorRedactor(context);
    this.context = redactedContext(context, this.redactor);
    this.span = startSpan('run', {
      parent: contextOf(run.trace_parent),
      attributes: { 'hangar.run_id': run.id, 'hangar.team': run.team_uid, 'hangar.execution_id': run.execution_id },
    });
    if (claimStarted) endSpan(withSpan(this.span, () => startSpan('claim', { startTime: claimStarted })));
    // Log lines written while the execution runs are redacted of its values too, whoever writes them.
    const deactivate = activateRedactor(run.id, run.execution_id, this.redactor);
    // Every line logged about this execution carries its run_id (and, tracing on, its trace_id).
    this.done = withLogFields({ run_id: run.id }, () =>
      withSpan(this.span, () =>
        this.execute().catch((error) =>
          context.log.error({ err: error, runId: run.id }, 'execution failed unexpectedly'),
        ),
      ),
    ).finally(() => {
      deactivate();
      this.releaseMeter?.();
      this.span?.setAttribute('hangar.state', this.outcome?.state ?? this.reason ?? 'none');
      endSpan(this.span);
    });
  }

  get runId(): string {
    return this.run.id;
  }

  /** The name of its workspace under the workspace root. */
  get workspaceName(): string {
    return workspaceName(this.run.id, this.run.execution_id);
  }

  /** Stops the execution: its run was cancelled, taken back, or this engine is shutting down. */
  stop(reason: 'cancelled' | 'lost' | 'shutdown'): void {
    if (this.stopping) return;
    this.stopping = true;
    this.reason = reason;
    this.abort.abort();
    void this.session?.cancel();
  }

  /**
   * Gives follow-ups that arrived while the agent runs to it, when the harness accepts input. Deliveries run one
   * at a time, and the execution waits for the last before it ends, so a follow-up that cannot be written (the
   * harness just exited) is put back for the next execution instead of being lost.
   */
  deliverFollowups(): Promise<void> {
    this.delivery = this.delivery
      .then(() => this.deliverNow())
      .catch((error) => this.context.log.warn({ err: error, runId: this.run.id }, 'follow-up delivery failed'));
    return this.delivery;
  }

  private async deliverNow(): Promise<void> {
    const session = this.session;
    if (!session?.acceptsInput || this.stopping || this.harnessExited) return;
    const { ledger } = this.context;
    const inputs = await ledger.takeFollowups(this.run.id, this.run.execution_id);
    const unsent = inputs.filter((input) => this.harnessExited || !session.send(input.message));
    if (unsent.length > 0)
      await ledger.returnFollowups(
        this.run.id,
        this.run.execution_id,
        unsent.map((input) => input.seq),
      );
  }

  /** Timeline events that ride with the execution's next write rather than costing a statement of their own. */
  private unwritten: TimelineEvent[] = [];

  private withUnwritten(events: TimelineEvent[]): TimelineEvent[] {
    const all = [...this.unwritten, ...events];
    this.unwritten = [];
    return all;
  }

  private event(type: string, payload?: Record<string, unknown>): Promise<void> {
    return this.context.ledger.events(this.run.id, this.run.execution_id, this.withUnwritten([{ type, payload }]));
  }

  /** Moves the run on if it is still this execution's; false when it was cancelled or taken back meanwhile. */
  private transition(from: RunState, to: RunState, events: TimelineEvent[], extra: Partial<Transition> = {}) {
    return this.context.ledger.transition({
      runId: this.run.id,
      executionId: this.run.execution_id,
      from,
      to,
      events: this.withUnwritten(events),
      ...extra,
    });
  }

  /** How long opening the execution's container took (its image pull included); unset without one. */
  private pullMs: number | undefined;

  /** When this execution began (its claim), for the setup time. */
  private readonly began = performance.now();

  private async execute(): Promise<void> {
    const { context, run } = this;
    // The server's engine claims runs straight into CLAIMED; a worker takes its assigned run here.
    if (
      run.state === 'PENDING' &&
      !(
        await inSpan('claim', {}, () =>
          this.transition('PENDING', 'CLAIMED', [{ type: 'oz_run_claimed', payload: { engine: context.engineId } }]),
        )
      ).moved
    )
      return;
    let workspace: string | undefined;
    let keepWorkspace = false;
    // Workspace, files, model, clones and setup commands: the setup span, ended when the agent is about to start.
    const setup = startSpan('setup');
    try {
      workspace = await context.workspaces.create(run.id, run.execution_id);
      // A sandbox per execution (a container) is ready once it is opened, below.
      const perExecution = context.sandbox.executions;
      if (!perExecution)
        this.unwritten.push({ type: 'worker_container_ready', payload: { sandbox: context.sandbox.kind } });
      const harnessName =
        run.harness ?? (run.agent_config.harness as { type?: string } | undefined)?.type ?? context.defaultHarness;
      const harness = context.harnesses.get(harnessName);
      this.span?.setAttribute('hangar.harness', harnessName);
      // A model or MCP server that cannot be used fails the run before anything is cloned or set up.
      const builtIn = harness ? await this.prepareBuiltIn(harnessName) : undefined;
      if (builtIn === null) return;
      const environment =
        run.environment_id !== null
          ? await context.ledger.environment(run.team_uid, run.environment_id, run.id)
          : undefined;
      // Another team's environment runs that team's setup in here: this team's secrets only with its admins' consent.
      const withheld = guestSecretsRefusal(run.agent_config, run.environment_id, environment, builtIn);
      if (withheld) {
        this.outcome = failedToStart(new HarnessStartError(withheld, 'not_authorized'));
        return;
      }
      // The container of an environment's run is opened as its setup decides: from a setup snapshot's image on a
      // warm start, else from the environment's.
      const inWorkspace = workspace;
      const open = (image?: string) => this.openSandbox(inWorkspace, environment, harness, image);
      if (perExecution && run.environment_id === null && !(await open())) return;
      if (run.environment_id !== null) {
        const retained = await withSpan(setup, () =>
          this.setUpEnvironment(
            workspace!,
            run.environment_id!,
            environment,
            harnessName,
            perExecution ? open : undefined,
          ),
        );
        if (retained === 'stop') return;
        if (retained) {
          keepWorkspace = true;
          this.onRetained?.(retained);
          return;
        }
      }
      if (!harness) {
        this.outcome = failedToStart(
          new HarnessStartError(
            `The harness "${harnessName}" is not configured on this server`,
            'integration_not_configured',
          ),
        );
        return;
      }
      // The git settings another team's setup wrote do not run in this team's agent (clone-git-config.ts).
      if (guestRunOf(environment)) {
        const cleaned = await context.workspaces.cleanOwnersGitConfig(
          workspace,
          environment!.github_repos.map(({ repo }) => repo),
        );
        if (!cleaned.ok) {
          this.outcome = failedToStart(new HarnessStartError(cleaned.message, 'environment_setup_failed'));
          return;
        }
        this.guestGitHome = cleaned.home;
      }
      // After the environment: a snapshot then never holds a run's attachments, and a restore never loses them.
      if (run.attachment_count > 0)
        await context.workspaces.addFiles(workspace, await context.ledger.attachments(run.id));
      endSpan(setup);
      await inSpan('agent', { 'hangar.harness': harness.name }, () => this.runAgent(harness, inWorkspace, builtIn));
      if (this.github && this.outcome?.state === 'SUCCEEDED' && !this.stopping) {
        const github = this.github;
        const succeeded = this.outcome;
        this.outcome = await inSpan('publish', {}, () =>
          github.publish(inWorkspace, succeeded, (type, payload) => this.event(type, payload)),
        );
      }
    } catch (error) {
      endSpan(setup, error);
      if (this.stopping) return;
      if (error instanceof HarnessStartError) {
        this.outcome = failedToStart(error);
        return;
      }
      if (error instanceof WorkspacePathError) {
        // The run's own setup put a link (or something else) where the server writes its files: refused, never followed.
        this.outcome = failedToStart(
          new HarnessStartError(`Hangar could not prepare the workspace: ${error.message}`, 'environment_setup_failed'),
        );
        return;
      }
      if (isDatabaseUnavailable(error)) {
        context.log.warn({ err: error, runId: run.id }, 'the database was unavailable during the execution');
        // A blip before the agent did no work of the run's: it is queued again. After, the agent may have acted.
        if (!this.agentMayHaveRun) this.unavailableBeforeAgent = true;
        else this.outcome = { state: 'ERROR', statusMessage: DATABASE_UNAVAILABLE, usage: null };
        return;
      }
      context.log.error({ err: error, runId: run.id }, 'execution failed');
      this.outcome = {
        state: 'ERROR',
        statusMessage: { message: 'Hangar could not execute the run', error_code: 'internal_error', retryable: true },
        usage: null,
      };
    } finally {
      // The execution's tokens end with it (the workspace and its credential file go next).
      await this.github?.close().catch(() => undefined);
      if (workspace !== undefined && !keepWorkspace) await context.workspaces.remove(workspace).catch(() => undefined);
      const shutdown: TimelineEvent[] = keepWorkspace
        ? []
        : [{ type: 'vm_shutdown', ...(this.reason ? { payload: { reason: this.reason } } : {}) }];
      endSpan(setup);
      await inSpan('end', {}, () => this.settle(this.withUnwritten(shutdown))).catch((error) =>
        context.log.error({ err: error, runId: run.id }, 'could not record how the run ended'),
      );
    }
  }

  /**
   * Records the end: the outcome, or what a cancel, a lost lease or a shutdown leaves to do. `before` are the
   * events of the sandbox going away, written with the outcome when there is one.
   */
  private async settle(before: TimelineEvent[]): Promise<void> {
    const { context, run } = this;
    if (this.outcome && this.reason === undefined) {
      await this.finish(this.outcome, before);
      return;
    }
    const tail = this.takeTranscriptTail();
    if (tail.length > 0)
      await context.ledger
        .transcript(tail)
        .catch((error) => context.log.error({ err: error, runId: run.id }, 'could not write the transcript'));
    if (before.length > 0) await this.context.ledger.events(run.id, run.execution_id, before).catch(() => undefined);
    const requeueBecause =
      this.reason === 'shutdown'
        ? 'the executor shut down before the agent started'
        : this.unavailableBeforeAgent
          ? 'the database was unavailable before the agent started'
          : undefined;
    if (requeueBecause && !this.agentMayHaveRun && !this.agentStarted) {
      await context.ledger.requeue(run.id, run.execution_id, requeueBecause);
    } else if (this.reason === 'shutdown') {
      await this.finish(
        {
          state: 'ERROR',
          statusMessage: {
            message: 'The server shut down while the run was in progress; the run may be retried',
            error_code: 'resource_unavailable',
            retryable: true,
          },
          usage: null,
        },
        [],
      );
    } else if (this.reason !== undefined) {
      if (this.agentStarted) await context.ledger.clearSandboxIfCancelled(run.id, run.execution_id);
      if (this.reason === 'cancelled') this.logEnd('CANCELLED', undefined);
    }
  }

  /**
   * Opens the execution's sandbox (its container, from the environment's image): false when it cannot be, with the
   * outcome set. The container gets network when setup commands or the harness ask for it.
   */
  private async openSandbox(
    workspace: string,
    environment: EnvironmentConfig | undefined,
    harness: Harness | undefined,
    /** A setup snapshot's image (local to the engine), instead of the environment's. */
    snapshotImage?: string,
  ): Promise<boolean> {
    const { context } = this;
    const opening = performance.now();
    const setupNetwork = (environment?.setup_commands.length ?? 0) > 0 && context.workspaces.setupNetwork;
    const image = snapshotImage ?? environment?.docker_image;
    // An environment saved before images were checked may still name an ID or a setup snapshot (issue 47.2).
    const imageProblem = !snapshotImage && image !== undefined ? environmentImageProblem(image) : undefined;
    if (imageProblem) {
      this.outcome = failedToStart(
        new HarnessStartError(`The environment's docker_image ${imageProblem}`, 'environment_setup_failed'),
      );
      return false;
    }
    let registryAuth: SandboxOpenRequest['registryAuth'];

    if (environment?.registry_secret_name && !snapshotImage) {
      const credentials = await this.registryCredentials(environment.registry_secret_name, image);
      if (typeof credentials === 'string') {
        this.outcome = failedToStart(new HarnessStartError(credentials, 'environment_setup_failed'));
        return false;
      }
      registryAuth = credentials;
    }
    const opened = await context.sandbox.executions!.open({
      workspace,
      image,
      network: setupNetwork || harness?.network === true,
      ...(environment?.limits ? { limits: environment.limits } : {}),
      ...(registryAuth ? { registryAuth } : {}),
      report: (type, payload) => this.event(type, payload),
    });
    if (this.stopping) return false;
    if (!opened.ok) {
      this.outcome = failedToStart(new HarnessStartError(opened.message, 'environment_setup_failed'));
      return false;
    }
    this.unwritten.push({
      type: 'worker_container_ready',
      payload: { sandbox: context.sandbox.kind, ...opened.details },
    });
    // The first container's: a cold start's snapshot opens the execution's container again (counted in `snapshot`).
    this.pullMs ??= Math.round(performance.now() - opening);
    return true;
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
    // In the team that owns the environment: a shared environment's credentials are its owner's (issue 47.3a).
    const value = this.run.environment_id
      ? await this.context.ledger.registrySecret(this.run.team_uid, this.run.environment_id, this.run.id)
      : undefined;
    if (value === undefined)
      return `The environment's registry_secret_name names the team secret ${secretName}, which does not exist in the team that owns the environment`;
    const colon = value.indexOf(':');
    if (colon <= 0)
      return `The team secret ${secretName} (the environment's registry credentials) must be username:password`;
    const password = value.slice(colon + 1);
    this.redactor.add(`registry secret ${secretName}`, password);
    return { username: value.slice(0, colon), password, serveraddress: registryOf(image ?? '') };
  }

  /** Closing the execution's container, and retiring it (a backend that cannot retire closes it). */
  private containerEnds(workspace: string): { close: () => Promise<void>; retire: () => Promise<void> } {
    const executions = this.context.sandbox.executions!;
    return {
      close: () => executions.close(workspace),
      retire: () => (executions.retire ? executions.retire(workspace) : executions.close(workspace)),
    };
  }

  /** null: ready; 'stop': cancelled or ended; a retained workspace: failed, kept for debugging. */
  private async setUpEnvironment(
    workspace: string,
    environmentId: string,
    environment: EnvironmentConfig | undefined,
    harness: string | undefined,
    /** Opens the execution's container (container sandbox): false when it could not be, the outcome set. */
    open?: (snapshotImage?: string) => Promise<boolean>,
  ): Promise<RetainedWorkspace | 'stop' | null> {
    const { context, run } = this;
    if (!environment) {
      this.outcome = {
        state: 'FAILED',
        statusMessage: {
          message: `Environment ${environmentId} no longer exists or this team cannot reach it`,
          error_code: 'environment_setup_failed',
          retryable: false,
        },
        usage: null,
      };
      return 'stop';
    }
    await this.event('environment_setup_started', {
      environment_id: environmentId,
      repos: environment.github_repos.map(({ owner, repo }) => `${owner}/${repo}`),
      setup_commands: environment.setup_commands.length,
    });
    try {
      // The team's GitHub tokens are its secrets too: not in another team's environment without consent (its
      // repositories are then cloned through the server's git base URL only).
      const withholdGitHub = withholdsTeamSecrets(environment);
      if (withholdGitHub && context.github && environment.github_repos.length > 0)
        await this.event('github_token_withheld', {
          reason: `environment ${environmentId} is another team's, and this team's admins have not allowed its secrets there`,
        });
      this.github = withholdGitHub ? null : await GitHubSession.open(context, run, environment, this.redactor);
    } catch (error) {
      if (!(error instanceof GitHubRefusal)) throw error;
      await this.event('github_token_failed', { reason: error.message });
      this.outcome = {
        state: 'FAILED',
        statusMessage: {
          message: `Environment setup failed: Hangar could not get a GitHub token for the run's repositories: ${error.message}`,
          error_code: 'environment_setup_failed',
          retryable: false,
        },
        usage: null,
        eventPayload: { environment_id: environmentId },
      };
      return 'stop';
    }
    const report = (type: string, payload: Record<string, unknown>) => this.event(type, payload);
    const access = this.github?.cloneAccess();
    // Repositories read with the run's own GitHub token are cloned for this execution alone and never snapshotted:
    // the mirror and the snapshots are shared by every run of the environment.
    const warm = context.warm && !access?.tokens.size;
    if (open && !warm && !(await open())) return 'stop';
    const prepared: PreparedEnvironment | null = warm
      ? await context.warm!.prepare({
          workspace,
          runId: run.id,
          executionId: run.execution_id,
          environmentUid: environmentId,
          teamUid: run.team_uid,
          environment,
          mayTakeSnapshot: run.attachment_count === 0,
          report,
          abort: this.abort.signal,
          ...(open ? { sandbox: { open, ...this.containerEnds(workspace) } } : {}),
        })
      : await this.setUpCold(workspace, environment, report, access);
    // The container could not be opened (the outcome says why).
    if (!prepared) return 'stop';
    const { result } = prepared;
    if (this.stopping) return 'stop';
    await context.ledger.recordSetupResult(environmentId, !result.ok, run.id, run.execution_id);
    if (result.ok) {
      // Which path it took and where the time went (issue 28): the pull (containers), fetch, clone or restore,
      // update, setup, snapshot; the agent's own start is on agent_started.
      await this.event('environment_setup_done', {
        environment_id: environmentId,
        path: prepared.path,
        steps_ms: { ...(this.pullMs !== undefined ? { pull: this.pullMs } : {}), ...stepsOf(prepared.steps) },
        ...(prepared.snapshotKey ? { snapshot_key: prepared.snapshotKey } : {}),
      });
      return null;
    }
    // No debug window in another team's environment: its debug agent would work in the owner's setup as it was left,
    // git settings included (clone-git-config.ts cleans them only before the agent of a setup that passed).
    const minutes = this.onRetained && !guestRunOf(environment) ? environment.failure_session_retention_minutes : null;
    const until = minutes ? new Date(Date.now() + minutes * 60_000) : undefined;
    const statusMessage = {
      message: result.message,
      error_code: 'environment_setup_failed',
      retryable: false,
      ...(until ? { session_debug_until: until.toISOString() } : {}),
    };
    const conversationId = run.conversation_id ?? randomUUID();
    const outcome: Outcome = {
      state: 'FAILED',
      statusMessage,
      usage: null,
      eventPayload: { environment_id: environmentId },
    };
    if (!until) {
      this.outcome = outcome;
      return 'stop';
    }
    // The workspace stays, so it is not shut down: the run ends now, and the debug window starts.
    const ended = await this.finish(
      { ...outcome, debugSession: { owner: context.engineId, workspace, until: until.toISOString() } },
      [],
    );
    if (ended !== 'ended') return 'stop';
    return {
      runId: run.id,
      executionId: run.execution_id,
      teamUid: run.team_uid,
      workspace,
      until,
      retentionMinutes: minutes!,
      harness,
      prompt: run.prompt,
      failure: result.message,
      agentConfig: run.agent_config,
      conversationId,
    };
  }

  /** Clone and setup without snapshots (a worker, snapshots turned off, or GitHub-token repositories), timed the same way. */
  private async setUpCold(
    workspace: string,
    environment: EnvironmentConfig,
    report: (type: string, payload: Record<string, unknown>) => Promise<void>,
    access: CloneAccess | undefined,
  ): Promise<PreparedEnvironment> {
    const started = performance.now();
    const result = await this.context.workspaces.setUp(workspace, environment, report, this.abort.signal, access);
    return { result, path: 'cold', steps: { setup_ms: Math.round(performance.now() - started) } };
  }

  /** The built-in harness's model and MCP servers (see builtInSetup); null when the run cannot start (the outcome says why). */
  private async prepareBuiltIn(harnessName: string): Promise<BuiltInSetup | undefined | null> {
    try {
      const setup = await builtInSetup(this.context, this.run, harnessName);
      addBuiltInSecrets(this.redactor, harnessName, this.run.agent_config, setup);
      return setup;
    } catch (error) {
      if (!(error instanceof HarnessStartError)) throw error;
      this.outcome = failedToStart(error);
      return null;
    }
  }

  private async runAgent(harness: Harness, workspace: string, builtIn: BuiltInSetup | undefined): Promise<void> {
    const { context, run } = this;
    const conversationId = run.conversation_id ?? randomUUID();
    const modelId = builtIn?.model.id;
    // The agent's start is recorded once its harness process exists, not before, and the intent to start it just
    // before the spawn: an engine that dies before the intent leaves the run CLAIMED, and its takeback puts it back in
    // the queue, as nothing of its agent ran; one that dies between the intent and the record may have left a harness
    // that ran (it wrote its first line before the record), so the takeback ends the run ERROR, retryable, instead.
    // So what the harness starts with is read before either (the conversation so far, its GitHub credentials), and
    // the follow-ups waiting, which the start takes, with the intent (later ones are delivered below like any
    // follow-up). A ledger that cannot read the follow-ups without taking them (a worker's link) records the start
    // just before the spawn instead.
    const agentBegan = performance.now();
    // A new conversation has no earlier executions to replay.
    const continuing = run.conversation_id !== null || run.execution_id > 1;
    const history = continuing
      ? await context.ledger.history(run.conversation_id ?? conversationId, run.id, run.execution_id)
      : [];
    // A continued run's cap is on its total: what its earlier executions spent counts (the run's request_usage is
    // their sum plus this execution's, see hangar_usage_total).
    const spentBefore = run.execution_id > 1 ? costIn(await context.ledger.usageBefore(run.id)) : 0;
    if (this.stopping) return;
    const basePrompt = run.agent_config.base_prompt;
    const cap = spendCap(run.agent_config, context.defaultMaxCostUsd);
    // Already past it (a follow-up to a run its cap stopped): the harness is stopped as soon as it starts.
    if (cap !== undefined && spentBefore > cap) this.overBudget = { cap, spent: spentBefore };
    // The run's spend so far goes to the ledger as usage grows (budgets count runs in flight), and the cap is
    // checked on every usage event: the harness is stopped on the first one that takes the run past it.
    const live = new LiveUsage(
      (usage) => context.ledger.usage(run.id, run.execution_id, usage),
      (error) => context.log.warn({ err: error, runId: run.id }, 'could not record the usage of a run in flight'),
    );
    // A CLI's calls through the model proxy are metered there, priced per call at the catalogue's rates: once the
    // proxy has seen one, the execution's usage is the meter's, and what the CLI says it used is only its transcript.
    const meter = new ModelMeter({
      runId: run.id,
      executionId: run.execution_id,
      teamUid: run.team_uid,
      cap,
      spentBefore,
      report: (usage) => live.report(usage),
      overCap: (spent) => {
        if (cap === undefined || this.overBudget) return;
        this.overBudget = { cap, spent };
        void this.session?.cancel();
      },
    });
    this.releaseMeter = activateModelMeter(meter);
    const onUsage = (usage: Readonly<Record<string, number>>) => {
      if (meter.used) return;
      const priced = { ...usage };
      this.priceUsage(priced, modelId);
      live.report(priced);
      if (cap === undefined || this.overBudget) return;
      const own = this.costOf(usage, modelId);
      if (own === undefined) return;
      const spent = spentBefore + own;
      if (spent <= cap) return;
      this.overBudget = { cap, spent };
      void this.session?.cancel();
    };
    const env = withGuestGit(
      {
        ...context.ledger.variables(run.id, run.execution_id),
        ...(this.github ? await this.github.prepareHarness(workspace) : {}),
      },
      this.guestGitHome,
    );
    if (this.stopping) return;
    // The intent to start, with the follow-ups the harness starts with, in one statement (batched across starts).
    const waiting = context.ledger.beginAgentStart
      ? await context.ledger.beginAgentStart(run.id, run.execution_id)
      : undefined;
    const recordStart = () =>
      this.transition(
        'CLAIMED',
        'INPROGRESS',
        [
          {
            type: 'agent_started',
            payload: {
              harness: harness.name,
              ...(modelId ? { model_id: modelId } : {}),
              // From the end of setup to the harness process (its files, history, spawn): the last step's time.
              start_ms: Math.round(performance.now() - agentBegan),
            },
          },
        ],
        {
          started: true,
          conversationId,
          harness: harness.name,
          ...(modelId ? { modelId } : {}),
          takeInputs: true,
          ...(waiting ? { takeInputsUpTo: waiting.at(-1)?.seq ?? '0' } : {}),
          // Counted where the start is recorded (the server, also for a worker's execution).
          setupSeconds: (performance.now() - this.began) / 1000,
        },
      );
    const recordedFirst = waiting === undefined ? await recordStart() : undefined;
    if (recordedFirst) {
      if (!recordedFirst.moved) return;
      this.agentStarted = true;
    }
    let startRecorded!: (recorded: boolean) => void;
    const recorded = new Promise<boolean>((resolve) => (startRecorded = resolve));
    if (recordedFirst) startRecorded(true);
    this.agentMayHaveRun = true;
    const { session, result } = await startHarnessRun(
      context,
      harness,
      {
        runId: run.id,
        executionId: run.execution_id,
        kind: 'agent',
        conversationId: run.conversation_id ?? conversationId,
        prompt: run.prompt,
        basePrompt: typeof basePrompt === 'string' ? basePrompt : null,
        followups: waiting?.map((input) => input.message) ?? recordedFirst!.inputs,
        history,
        workspace,
        workspaceOwner: context.workspaces.owner,
        env,
        agentConfig: run.agent_config,
        ...builtIn,
      },
      run.team_uid,
      true,
      recorded,
      onUsage,
    ).catch((error) => {
      startRecorded(false);
      throw error;
    });
    void session.exited.then(() => (this.harnessExited = true));
    if (!recordedFirst) {
      // Stopped while the harness started (a cancel, a shutdown): its start is not recorded, so a shutdown puts the
      // run back in the queue.
      const started = this.stopping ? { moved: false } : await recordStart().catch((error: unknown) => error);
      const moved = !(started instanceof Error) && (started as { moved: boolean }).moved;
      startRecorded(moved);
      if (!moved) {
        // Cancelled or taken back while the harness started (or the start could not be written): it never counted
        // as started, and it stops now.
        await session.cancel();
        await result;
        if (started instanceof Error) throw started;
        return;
      }
    }
    this.agentStarted = true;
    this.session = session;
    if (this.stopping || this.overBudget) void session.cancel();
    // Follow-ups that arrived after the harness was given its own: sent to it, or kept for the next execution.
    await this.deliverFollowups();
    const finished = await result;
    this.releaseMeter?.();
    this.transcriptTail = finished.transcriptTail;
    this.harnessExited = true;
    await this.delivery;
    if (this.stopping) return;
    const usage = meter.used ? meter.usage() : finished.usage;
    this.outcome = this.overBudget ? budgetExceeded(this.overBudget, usage) : outcomeOf(finished, harness.name);
    if (meter.used) this.outcome.usage = usage;
    else this.priceUsage(this.outcome.usage, builtIn?.model.id);
  }

  /** USD spent according to `usage` (see priceUsage); undefined when it says nothing of cost. */
  private costOf(usage: Readonly<Record<string, number>>, resolvedModelId: string | undefined): number | undefined {
    if (resolvedModelId === undefined && usage.inference_cost !== undefined) return usage.inference_cost;
    const modelId = resolvedModelId ?? requestedModelId(this.run.agent_config);
    if (modelId === undefined || !this.context.price) return usage.inference_cost;
    if (usage.input_tokens === undefined && usage.output_tokens === undefined) return usage.inference_cost;
    return this.context.price(modelId, usage.input_tokens ?? 0, usage.output_tokens ?? 0) ?? usage.inference_cost;
  }

  /**
   * The cost of a built-in harness's tokens is the catalogue's (a CLI's own figure comes from its price table, not
   * the operator's); an operator's harness keeps its own, and tokens without one are priced at the catalogue's
   * rates when the run's model is a catalogue model.
   */
  private priceUsage(usage: Record<string, number> | null, resolvedModelId: string | undefined): void {
    if (!usage || !this.context.price) return;
    if (resolvedModelId !== undefined) delete usage.inference_cost;
    if (usage.inference_cost !== undefined) return;
    const modelId = resolvedModelId ?? requestedModelId(this.run.agent_config);
    if (modelId === undefined || (usage.input_tokens === undefined && usage.output_tokens === undefined)) return;
    const cost = this.context.price(modelId, usage.input_tokens ?? 0, usage.output_tokens ?? 0);
    if (cost !== undefined) usage.inference_cost = cost;
  }

  private async finish(outcome: Outcome, before: TimelineEvent[]) {
    const result = await this.context.ledger.finish({
      runId: this.run.id,
      executionId: this.run.execution_id,
      outcome,
      before,
      transcript: this.takeTranscriptTail(),
    });
    if (result === 'ended') this.logEnd(outcome.state, outcome.statusMessage?.error_code);
    return result;
  }

  /** One line per run end at info (issue 26): operators see failed runs in the server log, not only in the API. */
  private logEnd(state: RunState, errorCode: unknown): void {
    const durationMs = Date.now() - this.startedAt;
    this.context.log.info(
      {
        runId: this.run.id,
        state,
        ...(typeof errorCode === 'string' ? { error_code: errorCode } : {}),
        duration_ms: durationMs,
      },
      `run ${this.run.id} ended ${state}${typeof errorCode === 'string' ? ` (${errorCode})` : ''} after ${(durationMs / 1000).toFixed(1)} s`,
    );
  }

  private takeTranscriptTail(): TranscriptRow[] {
    const tail = this.transcriptTail;
    this.transcriptTail = [];
    return tail;
  }
}

/** `fetch_ms` and the like as `{ fetch: ... }`: the timeline's step durations. */
function stepsOf(steps: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(steps).map(([name, ms]) => [name.replace(/_ms$/, ''), ms]));
}

/** A harness that could not start: the run fails with the reason, which its owner or the operator can act on. */
function failedToStart(error: HarnessStartError): Outcome {
  return {
    state: 'FAILED',
    statusMessage: { message: error.message, error_code: error.errorCode, retryable: false },
    usage: null,
  };
}

/** The USD figure of a usage record (0 when it has none). */
function costIn(usage: Record<string, number> | null): number {
  const cost = usage?.inference_cost;
  return typeof cost === 'number' && Number.isFinite(cost) ? cost : 0;
}

/** A run's spend cap: its `config.max_cost_usd`, else the operator's default (none when neither is set). */
function spendCap(agentConfig: Record<string, unknown>, operatorDefault: number | undefined): number | undefined {
  const own = agentConfig.max_cost_usd;
  return typeof own === 'number' && own > 0 ? own : operatorDefault;
}

/** A run stopped by its spend cap: FAILED with budget_exceeded, naming the cap and what was spent. */
function budgetExceeded(over: { cap: number; spent: number }, usage: Record<string, number> | null): Outcome {
  return {
    state: 'FAILED',
    statusMessage: {
      message: `The run was stopped at its spend cap of ${over.cap} USD (config.max_cost_usd): it had spent ${over.spent.toFixed(4)} USD`,
      error_code: 'budget_exceeded',
      retryable: false,
    },
    usage,
  };
}
