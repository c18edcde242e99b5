import type { V1Job } from '@kubernetes/client-node';
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { DB } from '../../database.js';
import type { Bus } from '../../platform/bus.js';
import { formatBytes } from '../../platform/bytes.js';
import { type NextPass, PollingLoop } from '../../platform/loop.js';
import {
  type CapacityLimits,
  type ClaimedRun,
  engineGraceSeconds,
  leaseRenewalIntervalMs,
  type RunLifecycle,
} from '../../runs/index.js';
import type { EnginePresence } from '../engine/presence.js';
import { runHoldings } from '../engine/store.js';
import { TakebackLoop } from '../engine/takeback-loop.js';
import { runLimits } from '../sandbox/container/limits.js';
import { apiMessage, type Cluster } from './cluster.js';
import { executionObjects } from './job-spec.js';
import { type JobSink, JobWatch, type TrackedJob } from './job-watch.js';
import { LABEL } from './labels.js';
import { type PlannerOptions, planExecution } from './planner.js';

export interface KubernetesEngineOptions {
  db: Kysely<DB>;
  lifecycle: RunLifecycle;
  bus: Bus;
  log: FastifyBaseLogger;
  limits: CapacityLimits;
  leaseSeconds: number;
  cluster: Cluster;
  planner: Omit<PlannerOptions, 'owner'>;
  /** Tells readiness (and the other replicas) that an engine is alive. */
  presence: EnginePresence;
  /** PGlite: no other engine can be alive, so the takeback judges every other engine gone. */
  soleEngine?: string;
  unschedulableSeconds: number;
  pollIntervalMs?: number;
}

/** The lease owner of an installation's Kubernetes executions: stable across restarts, shared by its replicas. */
export function kubernetesOwner(instance: string): string {
  return `kubernetes:${instance}`;
}

/**
 * The engine of a server whose sandbox is Kubernetes: it claims queued runs as any engine does, but hands each
 * execution to a Job (job-spec.ts) whose pod runs a one-shot `hangar worker --execution` that reports over the
 * worker websocket. The runs are held by the installation (kubernetesOwner), not by this process, so a server that
 * restarts finds its Jobs again by their labels and goes on renewing their leases; the pod's connection renews them
 * too, on whichever replica it reached. What Kubernetes says of a pod that the pod's worker cannot (unschedulable,
 * image pull, OOMKilled, deadline, lost) ends the run here (settle.ts). Cancel deletes the Job, foreground.
 */
export class KubernetesEngine {
  private readonly watch: JobWatch;
  private readonly dispatching: PollingLoop;
  private readonly chores: PollingLoop;
  private readonly takingBack: TakebackLoop;
  private readonly owner: string;

  constructor(private readonly options: KubernetesEngineOptions) {
    const { log, leaseSeconds } = options;
    this.owner = kubernetesOwner(options.planner.settings.instance);
    const sink: JobSink = {
      holding: (job) => this.holding(job),
      settle: async (job, decided) => {
        const ref = { runId: job.runId, executionId: job.executionId };
        if (decided.kind === 'end') {
          await options.lifecycle.finish(this.owner, [{ ...ref, outcome: decided.outcome, before: [decided.event] }]);
          if (decided.deleteJob) await options.cluster.deleteJob(job.job);
          return;
        }
        // The takeback's own rules, now rather than when the lease passes: queued again unless the agent had
        // started (or may have), then ERROR, retryable.
        await options.lifecycle.events([{ ...ref, event: decided.event }]);
        await options.lifecycle.renewLeases(this.owner, [job.runId], 0);
        await options.lifecycle.takeBack({
          graceSeconds: engineGraceSeconds(leaseSeconds),
          soleEngine: options.soleEngine,
        });
        options.bus.announceDispatch();
      },
      event: (job, event) => options.lifecycle.events([{ runId: job.runId, executionId: job.executionId, event }]),
    };
    this.watch = new JobWatch({
      cluster: options.cluster,
      sink,
      log,
      unschedulableSeconds: options.unschedulableSeconds,
      onUntracked: (job) => void this.reconcile([job]).catch(() => undefined),
    });
    this.dispatching = new PollingLoop({
      intervalMs: options.pollIntervalMs ?? 1000,
      pass: () => this.dispatch(),
      onError: (error) => log.error({ err: error }, 'Kubernetes dispatch pass failed; retrying'),
    });
    this.chores = new PollingLoop({
      intervalMs: leaseRenewalIntervalMs(leaseSeconds),
      waitFirst: true,
      pass: () => this.renew(),
      onError: (error) => log.warn({ err: error }, 'renewing the Kubernetes executions failed'),
    });
    this.takingBack = new TakebackLoop({
      lifecycle: options.lifecycle,
      leaseSeconds,
      log,
      soleEngine: options.soleEngine,
      onTakenBack: () => options.bus.announceDispatch(),
    });
  }

  get running(): number {
    return this.watch.tracked.size;
  }

  async start(): Promise<void> {
    const { bus, log } = this.options;
    await bus.onDispatch(() => this.dispatching.wake());
    await bus.onRunControl((action, runId) => {
      if (action === 'cancel')
        void this.cancel(runId).catch((error) =>
          log.warn({ err: error, runId }, 'deleting a cancelled run Job failed'),
        );
    });
    await this.options.presence.start();
    this.watch.start();
    // Reattach before the first takeback: the Jobs of a server that restarted are still running its runs.
    await this.reconcile(await this.options.cluster.listJobs());
    this.takingBack.start();
    this.dispatching.start();
    this.chores.start();
  }

  /** Stops claiming and watching; the Jobs go on, and a server that starts again reattaches to them. */
  async stop(): Promise<void> {
    await Promise.all([this.dispatching.stop(), this.chores.stop(), this.takingBack.stop()]);
    await this.watch.stop();
    await this.options.presence.stop();
  }

  poke(): void {
    this.dispatching.wake();
  }

  private async dispatch(): Promise<NextPass> {
    const { lifecycle, limits, leaseSeconds } = this.options;
    const free = limits.global - this.watch.tracked.size;
    if (free <= 0) return undefined;
    const runs = await lifecycle.claim(this.owner, leaseSeconds, limits, Math.min(free, 20));
    await Promise.all(runs.map((run) => this.launch(run)));
    return runs.length > 0 && runs.length === Math.min(free, 20) ? 'now' : undefined;
  }

  /** Creates the execution's Job; a run whose Job cannot be created ends with the API server's reason. */
  private async launch(run: ClaimedRun): Promise<void> {
    const { lifecycle, cluster, log, planner } = this.options;
    const ref = { runId: run.id, executionId: run.execution_id };
    const end = (state: 'FAILED' | 'ERROR', message: string, code: string, retryable: boolean) =>
      lifecycle.finish(this.owner, [
        {
          ...ref,
          outcome: { state, statusMessage: { message, error_code: code, retryable }, usage: null },
          before: [],
        },
      ]);
    try {
      const request = await planExecution({ ...planner, owner: this.owner }, run);
      if ('problem' in request) {
        await end('FAILED', request.problem, 'environment_setup_failed', false);
        return;
      }
      const objects = executionObjects(request);
      const { limits } = runLimits(request.defaults, request.maximums, request.request);
      const name = objects.job.metadata!.name!;
      // Tracked before it exists: its pod's first updates may come before the create's answer.
      this.watch.track({ ...ref, job: name, image: request.image, memory: formatBytes(limits.memoryBytes) });
      await cluster.create(objects);
      await lifecycle.events([
        {
          ...ref,
          event: {
            type: 'kubernetes_job_created',
            payload: { namespace: cluster.namespace, job: name, image: request.image },
          },
        },
      ]);
    } catch (error) {
      this.watch.untrack(run.id);
      log.error({ err: error, runId: run.id }, 'could not create the run Job');
      await end(
        'ERROR',
        `The run's Kubernetes Job could not be created: ${apiMessage(error)}`,
        'resource_unavailable',
        true,
      ).catch((failure) => log.error({ err: failure, runId: run.id }, 'could not end a run whose Job failed'));
    }
  }

  private async holding(job: TrackedJob): Promise<{ held: boolean; agentStarted: boolean }> {
    const row = (await runHoldings(this.options.db, [job.runId])).get(job.runId);
    const held =
      row !== undefined &&
      row.lease_owner === this.owner &&
      row.execution_id === job.executionId &&
      ['PENDING', 'CLAIMED', 'INPROGRESS'].includes(row.state);
    return { held, agentStarted: row?.agent_started ?? false };
  }

  /**
   * Jobs of this installation that nothing here tracks: those whose execution is still the run's and held by the
   * installation are this server's again (a restart); the others' runs ended, so they go (a Job that failed stays for
   * its time to live).
   */
  private async reconcile(jobs: readonly V1Job[]): Promise<void> {
    const candidates = jobs
      .map((job) => ({
        job,
        runId: job.metadata?.labels?.[LABEL.run],
        executionId: Number(job.metadata?.labels?.[LABEL.execution]),
      }))
      .filter((entry) => entry.runId !== undefined && !this.watch.tracked.has(entry.runId));
    if (candidates.length === 0) return;
    const holdings = await runHoldings(
      this.options.db,
      candidates.map((entry) => entry.runId!),
    );
    for (const { job, runId, executionId } of candidates) {
      const row = holdings.get(runId!);
      const name = job.metadata!.name!;
      if (
        row &&
        row.lease_owner === this.owner &&
        row.execution_id === executionId &&
        ['PENDING', 'CLAIMED', 'INPROGRESS'].includes(row.state)
      ) {
        const task = job.spec?.template.spec?.containers.find((container) => container.name === 'task');
        const memory = task?.resources?.limits?.memory;
        this.options.log.info({ runId, job: name }, 'reattached to a running run Job');
        this.watch.track({
          runId: runId!,
          executionId,
          job: name,
          image: task?.image ?? 'the image',
          memory: memory ? formatBytes(Number(memory)) : 'its limit',
        });
        continue;
      }
      const failed = job.status?.conditions?.some(
        (condition) => condition.type === 'Failed' && condition.status === 'True',
      );
      if (!failed && !job.metadata?.deletionTimestamp) {
        this.options.log.info({ runId, job: name }, 'deleting the Job of an execution that ended');
        await this.options.cluster.deleteJob(name);
      }
    }
  }

  /** Renews the leases of the tracked executions; one no longer the installation's (taken back, ended) loses its Job. */
  private async renew(): Promise<void> {
    const { lifecycle, leaseSeconds, cluster, log } = this.options;
    this.watch.tick();
    const ids = [...this.watch.tracked.keys()];
    const held = await lifecycle.renewLeases(this.owner, ids, leaseSeconds);
    for (const id of ids) {
      if (held.has(id)) continue;
      const job = this.watch.tracked.get(id);
      this.watch.untrack(id);
      if (job)
        await cluster.deleteJob(job.job).catch((error) => log.warn({ err: error, runId: id }, 'deleting a Job failed'));
    }
    await this.options.presence.heartbeat().catch((error) => log.warn({ err: error }, 'engine heartbeat failed'));
  }

  /** A cancelled run's Job is deleted with its pod first; the run has no sandbox once the deletion is asked. */
  private async cancel(runId: string): Promise<void> {
    const job = this.watch.tracked.get(runId);
    if (!job) return;
    this.watch.untrack(runId);
    await this.options.cluster.deleteJob(job.job);
    await this.options.lifecycle.clearSandboxIfCancelled(this.owner, runId, job.executionId);
  }
}
