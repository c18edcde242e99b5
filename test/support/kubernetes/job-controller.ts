import type { EventRecorder } from './events.js';
import type { GarbageCollector } from './garbage-collector.js';
import type { PodStatus } from './pod-status.js';
import { resourceTypeOfKind } from './resources.js';
import { type KubeObject, now, type ObjectStore } from './store.js';

/**
 * The Job controller, for the Jobs a client like Hangar makes (one pod at a time, NonIndexed): it creates the
 * Job's pod from its template, counts the pods that succeeded and failed (a pod deleted before it ended counts as
 * failed, as with pod-tracking finalizers), replaces failed ones up to `backoffLimit`, enforces
 * `activeDeadlineSeconds` (DeadlineExceeded: the pods are deleted, then the Job fails), writes the Job's status and
 * conditions (SuccessCriteriaMet then Complete; FailureTarget then Failed) and Events, and deletes a finished Job
 * `ttlSecondsAfterFinished` later (foreground, as the TTL controller does).
 */
const JOB = resourceTypeOfKind('Job');
const POD = resourceTypeOfKind('Pod');

interface JobCounts {
  succeeded: Set<string>;
  failed: Set<string>;
  failing?: { reason: string; message: string };
  timers: NodeJS.Timeout[];
}

interface JobSpec {
  backoffLimit: number;
  completions: number;
  activeDeadlineSeconds?: number;
  ttlSecondsAfterFinished?: number;
  suspend?: boolean;
  template: {
    metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
    spec: Record<string, unknown>;
  };
}

interface JobStatus {
  startTime?: string;
  completionTime?: string;
  active?: number;
  ready?: number;
  terminating?: number;
  succeeded?: number;
  failed?: number;
  uncountedTerminatedPods?: Record<string, never>;
  conditions?: Array<{
    type: string;
    status: string;
    reason?: string;
    message?: string;
    lastProbeTime: string;
    lastTransitionTime: string;
  }>;
}

export class JobController {
  private readonly jobs = new Map<string, JobCounts>();
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly store: ObjectStore,
    private readonly events: EventRecorder,
    private readonly collector: GarbageCollector,
  ) {}

  start(): void {
    this.unsubscribe = this.store.subscribe((change) => {
      if (change.type === JOB) {
        const uid = change.object.metadata.uid ?? '';
        if (change.event === 'ADDED') queueMicrotask(() => this.sync(change.object));
        if (change.event === 'DELETED') {
          for (const timer of this.jobs.get(uid)?.timers ?? []) clearTimeout(timer);
          this.jobs.delete(uid);
        }
        return;
      }
      if (change.type !== POD) return;
      const owner = change.object.metadata.ownerReferences?.find(
        (reference) => reference.kind === 'Job' && reference.controller,
      );
      if (!owner) return;
      const counts = this.jobs.get(owner.uid);
      const phase = (change.object.status as PodStatus | undefined)?.phase;
      const podUid = change.object.metadata.uid ?? '';
      if (counts && phase === 'Succeeded') counts.succeeded.add(podUid);
      // A pod gone before it ended counts as failed (the pod-tracking finalizer's accounting).
      else if (counts && (phase === 'Failed' || change.event === 'DELETED') && !counts.succeeded.has(podUid))
        counts.failed.add(podUid);
      queueMicrotask(() => {
        const job = this.store.find(JOB, change.object.metadata.namespace, owner.name);
        if (job?.metadata.uid === owner.uid) this.sync(job);
      });
    });
  }

  stop(): void {
    this.unsubscribe?.();
    for (const counts of this.jobs.values()) for (const timer of counts.timers) clearTimeout(timer);
  }

  private sync(job: KubeObject): void {
    const { namespace, name = '', uid = '' } = job.metadata;
    if (job.metadata.deletionTimestamp) return;
    const spec = job.spec as JobSpec;
    const status = (job.status ?? {}) as JobStatus;
    if (
      status.conditions?.some(
        (condition) => (condition.type === 'Complete' || condition.type === 'Failed') && condition.status === 'True',
      )
    )
      return;
    let counts = this.jobs.get(uid);
    if (!counts) {
      counts = { succeeded: new Set(), failed: new Set(), timers: [] };
      this.jobs.set(uid, counts);
      if (spec.activeDeadlineSeconds !== undefined && !spec.suspend) {
        const { activeDeadlineSeconds } = spec;
        counts.timers.push(setTimeout(() => this.deadlineExceeded(namespace, name, uid), activeDeadlineSeconds * 1000));
      }
    }
    const pods = this.store.list(
      POD,
      namespace,
      (pod) => pod.metadata.ownerReferences?.some((owner) => owner.uid === uid) ?? false,
    ).items;
    const terminal = (pod: KubeObject) =>
      ['Succeeded', 'Failed'].includes((pod.status as PodStatus | undefined)?.phase ?? '');
    const active = pods.filter((pod) => !terminal(pod) && !pod.metadata.deletionTimestamp);
    const terminating = pods.filter((pod) => !terminal(pod) && pod.metadata.deletionTimestamp);
    const ready = active.filter((pod) =>
      (pod.status as PodStatus | undefined)?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
    );
    let finished: 'Complete' | 'Failed' | undefined;
    if (counts.succeeded.size >= spec.completions) finished = 'Complete';
    else if (!counts.failing && counts.failed.size > spec.backoffLimit)
      counts.failing = { reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit' };
    if (counts.failing && !finished) for (const pod of active) void this.collector.delete(POD, pod, {});
    if (counts.failing && active.length === 0 && terminating.length === 0) finished = 'Failed';
    if (!finished && !counts.failing && active.length + terminating.length === 0 && !spec.suspend) {
      const created = this.createPod(job);
      active.push(created);
    }
    const updated = this.store.update(JOB, namespace, name, (copy) => {
      const next = (copy.status ?? {}) as JobStatus;
      next.startTime ??= now();
      next.active = finished ? 0 : active.length;
      next.ready = finished ? 0 : ready.length;
      next.terminating = terminating.length;
      next.succeeded = counts.succeeded.size || undefined;
      next.failed = counts.failed.size || undefined;
      next.uncountedTerminatedPods = {};
      next.conditions ??= [];
      if (counts.failing) setJobCondition(next, 'FailureTarget', counts.failing.reason, counts.failing.message);
      if (finished === 'Complete') {
        setJobCondition(next, 'SuccessCriteriaMet', 'CompletionsReached', 'Reached expected number of succeeded pods');
        setJobCondition(next, 'Complete', 'CompletionsReached', 'Reached expected number of succeeded pods');
        next.completionTime = now();
      }
      if (finished === 'Failed' && counts.failing)
        setJobCondition(next, 'Failed', counts.failing.reason, counts.failing.message);
      if (next.active === 0) delete next.active;
      if (next.terminating === 0) delete next.terminating;
      copy.status = next;
    });
    if (finished === 'Complete') this.events.record(updated, 'Normal', 'Completed', 'Job completed', 'job-controller');
    if (finished === 'Failed' && counts.failing)
      this.events.record(updated, 'Warning', counts.failing.reason, counts.failing.message, 'job-controller');
    if (finished && spec.ttlSecondsAfterFinished !== undefined) {
      counts.timers.push(
        setTimeout(() => {
          const current = this.store.find(JOB, namespace, name);
          if (current?.metadata.uid === uid)
            void this.collector.delete(JOB, current, { propagationPolicy: 'Foreground' });
        }, spec.ttlSecondsAfterFinished * 1000),
      );
    }
  }

  private createPod(job: KubeObject): KubeObject {
    const { namespace, name = '', uid = '' } = job.metadata;
    const { template } = job.spec as JobSpec;
    const pod = this.store.create(POD, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        generateName: `${name}-`,
        namespace,
        labels: { ...template.metadata?.labels },
        ...(template.metadata?.annotations ? { annotations: { ...template.metadata.annotations } } : {}),
        ownerReferences: [
          { apiVersion: 'batch/v1', kind: 'Job', name, uid, controller: true, blockOwnerDeletion: true },
        ],
      },
      spec: structuredClone(template.spec),
      status: { phase: 'Pending', conditions: [] },
    });
    this.events.record(job, 'Normal', 'SuccessfulCreate', `Created pod: ${pod.metadata.name}`, 'job-controller');
    return pod;
  }

  /** The deadline passed: the Job's pods are deleted; the Job fails once they are gone. */
  private deadlineExceeded(namespace: string | undefined, name: string, uid: string): void {
    const job = this.store.find(JOB, namespace, name);
    const counts = this.jobs.get(uid);
    if (!job || job.metadata.uid !== uid || !counts || counts.failing) return;
    const done = (job.status as JobStatus | undefined)?.conditions?.some(
      (c) => c.type === 'Complete' || c.type === 'Failed',
    );
    if (done) return;
    counts.failing = { reason: 'DeadlineExceeded', message: 'Job was active longer than specified deadline' };
    for (const pod of this.store.list(
      POD,
      namespace,
      (p) => p.metadata.ownerReferences?.some((o) => o.uid === uid) ?? false,
    ).items) {
      this.events.record(job, 'Normal', 'SuccessfulDelete', `Deleted pod: ${pod.metadata.name}`, 'job-controller');
      void this.collector.delete(POD, pod, {});
    }
    this.sync(job);
  }
}

function setJobCondition(status: JobStatus, type: string, reason: string, message: string): void {
  const conditions = status.conditions ?? [];
  if (conditions.some((condition) => condition.type === type)) return;
  const time = now();
  conditions.push({ type, status: 'True', reason, message, lastProbeTime: time, lastTransitionTime: time });
  status.conditions = conditions;
}
