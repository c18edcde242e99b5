import type { FastifyBaseLogger } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import {
  allowRunUserToWorkspaces,
  configuredHarnesses,
  containerPolicy,
  Execution,
  type ExecutionContext,
  holdRunReadableFiles,
  placeWorkspaces,
  resolveSandboxMode,
  runUserWarning,
  sandboxHiddenPaths,
  Workspaces,
} from '../execution/index.js';
import { ModelCatalogue } from '../models/index.js';
import { EgressProxy } from '../network/index.js';
import { WorkerLink } from './link.js';
import type { TaskAssignment } from './protocol.js';
import { RemoteGitHub } from './remote-github.js';
import { RemoteLedger } from './remote-ledger.js';
import { findSkills } from './skills.js';

export interface WorkerOptions {
  server: string;
  workerId: string;
  apiKey: string;
  maxConcurrentTasks: number;
  /** Harnesses, sandbox, workspaces (under its data directory) and limits, as for a server's engine. */
  config: Config;
  skillDirs: string[];
  log: Logger;
  /**
   * A run pod's one execution (`hangar worker --execution`, docs/kubernetes.md): the worker stops once it has
   * ended, and gives up on a server it has not reached for `giveUpAfterMs` (the run's lease has passed by then).
   */
  oneShot?: { giveUpAfterMs: number };
}

/**
 * `hangar worker`: executes the runs the server assigns to this worker ID, with the same Execution, sandbox and
 * harnesses as a server's engine, reporting everything back over the link. At most `maxConcurrentTasks` at a
 * time; an assignment beyond that is rejected and the server offers it again later or to another connection.
 */
export class Worker {
  private readonly link: WorkerLink;
  private readonly ledger: RemoteLedger;
  private readonly context: ExecutionContext;
  private readonly executions = new Map<string, { execution: Execution; executionId: number }>();
  private accepting = true;
  private giveUpTimer: NodeJS.Timeout | undefined;
  private gaveUp: Error | undefined;
  private oneShotEnding = false;
  /** The run-readable files (resolv.conf, the clones' git config) are this worker's until its shutdown. */
  private readonly releaseRunFiles = holdRunReadableFiles();

  constructor(private readonly options: WorkerOptions) {
    const { log } = options;
    // Workspaces its run user can reach, or a refusal naming the directory in the way, as for a server (issue 48).
    const config = placeWorkspaces(options.config);
    if (config.workspacesRelocated)
      log.warn(
        `the run user cannot reach ${config.workspacesRelocated.from} (it cannot pass through ${config.workspacesRelocated.blocking}): workspaces are in ${config.workspaceDir}`,
      );
    this.link = new WorkerLink({
      server: options.server,
      workerId: options.workerId,
      apiKey: options.apiKey,
      log,
      onAssignment: (assignment) => this.accept(assignment),
      onCancellation: (taskId, _executionId, reason) => {
        log.info({ taskId, reason }, 'task cancelled by the server');
        this.executions.get(taskId)?.execution.stop('cancelled');
      },
      onFollowups: (taskId) => void this.executions.get(taskId)?.execution.deliverFollowups(),
      onDisconnected: () => this.startGivingUp(),
      onConnected: () => {
        clearTimeout(this.giveUpTimer);
        this.sendStatus();
        void this.sendSkills();
      },
    });
    const apiUrl = `${options.server.replace(/\/+$/, '')}/api/v1`;
    // An artifact the server cannot record during a database outage is held as long as its other reports are.
    this.ledger = new RemoteLedger(this.link, apiUrl, config.maxArtifactBytes, {
      forMs: 2 * config.runLeaseSeconds * 1000,
      log,
    });
    // Runs drop to the run user as they do on the server, and a networked run still reaches the API it is given.
    const hiddenPaths = sandboxHiddenPaths(config);
    const sandbox = resolveSandboxMode(config.sandbox, {
      runAs: config.runUser,
      apiUrl: () => apiUrl,
      container: () => containerPolicy(config, hiddenPaths),
      readOnlyPaths: config.sandboxReadOnlyPaths,
    });
    if (config.runUser) allowRunUserToWorkspaces(config);
    if (sandbox.warning) log.warn(sandbox.warning);
    const asRoot = runUserWarning(config.runUser);
    if (asRoot) log.warn(asRoot);
    const catalogue = new ModelCatalogue(config.operator.catalogue, config.modelCredentials);
    this.context = {
      engineId: `worker:${options.workerId}`,
      ledger: this.ledger,
      log: log as unknown as FastifyBaseLogger,
      workspaces: Workspaces.fromConfig(config, sandbox.mode, hiddenPaths),
      harnesses: configuredHarnesses(config, sandbox.mode, hiddenPaths),
      defaultHarness: config.operator.defaultHarness,
      models: catalogue,
      sandbox: sandbox.mode,
      // An environment's allow list goes through an egress proxy of the worker's own, next to its sandboxes.
      ...(sandbox.mode.capabilities.egressProxy ? { egress: new EgressProxy(config.egress) } : {}),
      price: (modelId, input, output) => catalogue.cost(modelId, input, output),
      defaultMaxCostUsd: config.runDefaultMaxCostUsd,
      github: new RemoteGitHub(this.link, config.gitBaseUrl),
    };
  }

  /** Connects and works until stopped (resolves) or refused by the server (rejects). */
  run(): Promise<void> {
    // Containers a killed worker left in its workspace root: none of its executions runs any more.
    void this.context.sandbox
      .removeUnused(new Set())
      .catch((error) => this.context.log.warn({ err: error }, 'removing what an earlier worker left failed'));
    this.link.connect();
    return this.link.ended.then(() => {
      if (this.gaveUp) throw this.gaveUp;
    });
  }

  /** A run pod's worker that cannot reach its server past the lease stops its execution: it is no longer its own. */
  private startGivingUp(): void {
    const oneShot = this.options.oneShot;
    if (!oneShot) return;
    clearTimeout(this.giveUpTimer);
    this.giveUpTimer = setTimeout(() => {
      this.gaveUp = new Error(`the server was unreachable for ${Math.round(oneShot.giveUpAfterMs / 1000)} s`);
      this.options.log.warn(`${this.gaveUp.message}: stopping this execution`);
      this.endOneShot();
    }, oneShot.giveUpAfterMs);
  }

  /** A run pod's worker ends once, whichever comes first: its execution's end or giving up on the server. */
  private endOneShot(): void {
    if (this.oneShotEnding) return;
    this.oneShotEnding = true;
    void this.shutdown(0);
  }

  /**
   * Stops taking tasks, gives the running ones `graceMs` to finish, then stops the rest (a run whose agent had
   * not started goes back to the queue; one in progress ends ERROR, retryable) and disconnects.
   */
  async shutdown(graceMs: number): Promise<void> {
    this.accepting = false;
    this.sendStatus();
    const all = () => Promise.all([...this.executions.values()].map(({ execution }) => execution.done));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([all(), new Promise((resolve) => (timer = setTimeout(resolve, graceMs)))]);
    clearTimeout(timer);
    for (const { execution } of this.executions.values()) execution.stop('shutdown');
    await all();
    clearTimeout(this.giveUpTimer);
    this.link.close();
    await this.context.egress?.stop();
    this.releaseRunFiles();
  }

  private accept(assignment: TaskAssignment): void {
    const { task_id: taskId, execution_id: executionId } = assignment;
    if (!this.accepting || this.executions.size >= this.options.maxConcurrentTasks) {
      const reason = this.accepting ? `at capacity (${this.options.maxConcurrentTasks} tasks)` : 'shutting down';
      void this.link
        .call('task_rejected', { task_id: taskId, execution_id: executionId, reason })
        .catch(() => undefined);
      return;
    }
    if (this.executions.has(taskId)) return; // the same assignment again: already at work on it
    this.options.log.info({ taskId, executionId }, 'task assigned');
    this.ledger.track(assignment);
    const { task } = assignment;
    const execution = new Execution(this.context, {
      id: taskId,
      team_uid: task.team_uid,
      execution_id: executionId,
      prompt: task.prompt,
      agent_config: task.agent_config,
      environment_id: task.environment_id,
      conversation_id: task.conversation_id,
      harness: task.harness,
      attachment_count: assignment.attachments?.length ?? 0,
      trace_parent: assignment.traceparent ?? null,
      // The server assigned it in PENDING: the worker takes it when its execution starts (a run pod's is CLAIMED).
      state: assignment.state ?? 'PENDING',
    });
    this.executions.set(taskId, { execution, executionId });
    void execution.done.finally(() => {
      this.executions.delete(taskId);
      this.ledger.forget(taskId);
      this.options.log.info({ taskId, executionId }, 'task finished');
      this.sendStatus();
      if (this.options.oneShot) this.endOneShot();
    });
  }

  private sendStatus(): void {
    this.link.notify('worker_status', {
      running: [...this.executions.entries()].map(([taskId, { executionId }]) => ({
        task_id: taskId,
        execution_id: executionId,
      })),
      max_concurrent_tasks: this.options.maxConcurrentTasks,
      accepting: this.accepting,
    });
  }

  private async sendSkills(): Promise<void> {
    if (this.options.skillDirs.length === 0) return;
    const skills = await findSkills(this.options.skillDirs, (message) => this.options.log.warn(message));
    await this.link
      .call('worker_skills', { skills })
      .catch((error) => this.options.log.warn({ err: error }, 'could not report skills'));
  }
}
