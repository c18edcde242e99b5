import type { V1Job, V1Pod } from '@kubernetes/client-node';
import type { FastifyBaseLogger } from 'fastify';
import type { TimelineEvent } from '../../runs/index.js';
import { apiMessage, type Cluster } from './cluster.js';
import { LABEL } from './labels.js';
import { judge } from './pod-status.js';
import { type Settlement, settlement } from './settle.js';

/** One execution whose Job this process looks after. */
export interface TrackedJob {
  runId: string;
  executionId: number;
  job: string;
  image: string;
  memory: string;
  /** The pod was seen: its disappearance then means it was lost. */
  podSeen: boolean;
  /** The Job was seen (its create answered): its disappearance then means it was deleted. */
  jobSeen: boolean;
  unschedulableSince?: number;
  /** Acted on already (ended, taken back, cancelled): later updates change nothing. */
  settled: boolean;
}

/** Where the verdicts go: the server's lifecycle (engine.ts) or a worker's link (worker-backend.ts). */
export interface JobSink {
  /** Whether the run's agent had started, and whether the execution is still the run's and held by this holder. */
  holding(job: TrackedJob): Promise<{ held: boolean; agentStarted: boolean }>;
  settle(job: TrackedJob, settlement: Settlement): Promise<void>;
  event(job: TrackedJob, event: TimelineEvent): Promise<void>;
}

/** How long a failed watch waits before its informer lists and watches again. */
const RESTART_MS = 1000;

/**
 * The informers of one installation's Jobs and pods, and the judgement of each tracked execution whenever either
 * changes (and on every tick, for the time a pod may stay unschedulable). A watch that ends with 410 Gone lists again
 * by itself (the client's informer); one that fails otherwise is started again here.
 */
export class JobWatch {
  readonly tracked = new Map<string, TrackedJob>();
  private readonly jobs;
  private readonly pods;
  private stopped = false;
  private readonly restarts = new Set<NodeJS.Timeout>();

  constructor(
    private readonly options: {
      cluster: Cluster;
      sink: JobSink;
      log: FastifyBaseLogger;
      unschedulableSeconds: number;
      /** A Job of this installation that nothing tracks: the holder decides (reattach or delete). */
      onUntracked?: (job: V1Job) => void;
    },
  ) {
    this.jobs = options.cluster.jobInformer();
    this.pods = options.cluster.podInformer();
    for (const informer of [this.jobs, this.pods] as const) {
      informer.on('error', (error) => {
        if (this.stopped) return;
        options.log.warn({ err: error }, `Kubernetes watch failed (${apiMessage(error)}); listing again`);
        const timer = setTimeout(() => {
          this.restarts.delete(timer);
          if (!this.stopped) void informer.start().catch(() => undefined);
        }, RESTART_MS);
        this.restarts.add(timer);
      });
    }
    const changed = (object: V1Job | V1Pod) => {
      const runId = object.metadata?.labels?.[LABEL.run];
      const tracked = [...this.tracked.values()].find(
        (job) => job.job === (object.kind === 'Job' ? object.metadata?.name : jobOfPod(object as V1Pod)),
      );
      if (tracked) this.judge(tracked);
      else if (runId && object.kind === 'Job') this.options.onUntracked?.(object as V1Job);
    };
    for (const verb of ['add', 'update', 'delete'] as const) {
      this.jobs.on(verb, (job) => changed({ ...job, kind: 'Job' }));
      this.pods.on(verb, (pod) => changed({ ...pod, kind: 'Pod' }));
    }
  }

  /** Starts both informers; not awaited past their first list (a watch's answer may wait for its first event). */
  start(): void {
    for (const informer of [this.jobs, this.pods])
      void informer.start().catch((error) => this.options.log.warn({ err: error }, 'a Kubernetes watch did not start'));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const timer of this.restarts) clearTimeout(timer);
    await Promise.all([this.jobs.stop(), this.pods.stop()]);
  }

  track(job: Omit<TrackedJob, 'podSeen' | 'jobSeen' | 'settled'>): TrackedJob {
    const tracked: TrackedJob = { ...job, podSeen: false, jobSeen: false, settled: false };
    this.tracked.set(job.runId, tracked);
    this.judge(tracked);
    return tracked;
  }

  untrack(runId: string): void {
    this.tracked.delete(runId);
  }

  /** Looks at every tracked execution again: an unschedulable pod's time runs on the clock, not on updates. */
  tick(): void {
    for (const job of this.tracked.values()) this.judge(job);
  }

  private pod(job: TrackedJob): V1Pod | undefined {
    return this.pods.list().find((pod) => jobOfPod(pod) === job.job);
  }

  private judge(job: TrackedJob): void {
    if (job.settled) return;
    const pod = this.pod(job);
    const current = this.jobs.get(job.job, this.options.cluster.namespace);
    if (pod) job.podSeen = true;
    if (current) job.jobSeen = true;
    const verdict = judge(current, pod, { job: job.jobSeen, pod: job.podSeen });
    if (verdict.kind === 'running') {
      job.unschedulableSince = undefined;
      return;
    }
    if (verdict.kind === 'unschedulable') {
      if (job.unschedulableSince === undefined) {
        job.unschedulableSince = Date.now();
        void this.options.sink
          .event(job, { type: 'kubernetes_pod_pending', payload: { job: job.job, reason: verdict.message } })
          .catch((error) => this.options.log.warn({ err: error, runId: job.runId }, 'could not record a pod event'));
      }
      if (Date.now() - job.unschedulableSince < this.options.unschedulableSeconds * 1000) return;
    }
    job.settled = true;
    void this.act(job, verdict).catch((error) => {
      // Looked at again on the next tick.
      job.settled = false;
      this.options.log.warn({ err: error, runId: job.runId }, 'could not act on a Kubernetes verdict');
    });
  }

  private async act(job: TrackedJob, verdict: Exclude<ReturnType<typeof judge>, { kind: 'running' }>): Promise<void> {
    const { held, agentStarted } = await this.options.sink.holding(job);
    if (!held) {
      // The pod's worker reported the run's end (or it was cancelled or taken back): nothing of the run to decide.
      // A Job that ended well goes at once; a failed one stays for its time to live (a post-mortem).
      this.tracked.delete(job.runId);
      if (verdict.kind === 'exited' && verdict.exitCode === 0) await this.options.cluster.deleteJob(job.job);
      return;
    }
    const decided = settlement(verdict, { job: job.job, image: job.image, memory: job.memory, agentStarted });
    this.options.log.info({ runId: job.runId, job: job.job, verdict: verdict.kind }, 'run Job verdict');
    await this.options.sink.settle(job, decided);
    this.tracked.delete(job.runId);
  }
}

function jobOfPod(pod: V1Pod): string | undefined {
  return pod.metadata?.labels?.['job-name'] ?? pod.metadata?.ownerReferences?.find((ref) => ref.kind === 'Job')?.name;
}
