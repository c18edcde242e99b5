import type { V1ContainerStatus, V1Job, V1Pod } from '@kubernetes/client-node';

/**
 * What Kubernetes says of one execution's Job and pod, in the terms the run's end is decided in
 * (docs/kubernetes.md "What each failure looks like"). Pure: the backend keeps the clock and acts on it.
 */
export type JobVerdict =
  /** Nothing to act on: starting, running, or finished after the pod's worker reported the run's end. */
  | { kind: 'running' }
  /** The scheduler cannot place the pod (yet): an error once it lasts longer than the operator allows. */
  | { kind: 'unschedulable'; message: string }
  /** The task or runtime image cannot be pulled. */
  | { kind: 'image'; image: string; reason: string; message: string }
  /** A container was killed for passing its memory limit. */
  | { kind: 'oom'; container: string }
  /** The Job ran past activeDeadlineSeconds: the run's time limit. */
  | { kind: 'deadline'; message: string }
  /** The pod is gone or was stopped from outside (evicted, its node lost, deleted): the takeback rules apply. */
  | { kind: 'lost'; reason: string }
  /** The pod's containers ended by themselves: the worker in it reported the run's end, or died before it could. */
  | { kind: 'exited'; exitCode: number | null; message: string };

const IMAGE_REASONS = new Set(['ErrImagePull', 'ImagePullBackOff', 'InvalidImageName', 'ErrImageNeverPull']);
/** Pod reasons the kubelet or the control plane set when they stop a pod that did nothing wrong. */
const LOST_REASONS = new Set(['Evicted', 'NodeLost', 'Preempting', 'Terminated', 'Shutdown', 'NodeShutdown']);

export function judge(
  job: V1Job | undefined,
  pod: V1Pod | undefined,
  seen: { job: boolean; pod: boolean },
): JobVerdict {
  const podSeen = seen.pod;
  const failed = job?.status?.conditions?.find(
    (condition) => condition.type === 'Failed' && condition.status === 'True',
  );
  if (failed?.reason === 'DeadlineExceeded')
    return { kind: 'deadline', message: failed.message ?? 'Job was active longer than specified deadline' };
  if (!pod) {
    // A pod that was there and is gone while its Job had not finished: deleted, or its node lost.
    // A Job not seen yet is still being created (the informer lags the create's answer).
    if (job === undefined) return seen.job ? { kind: 'lost', reason: 'the Job was deleted' } : { kind: 'running' };
    if (podSeen || failed) return { kind: 'lost', reason: failed?.message ?? 'the pod was deleted (its node lost?)' };
    return { kind: 'running' };
  }
  const status = pod.status ?? {};
  const statuses = [...(status.initContainerStatuses ?? []), ...(status.containerStatuses ?? [])];
  const oom = statuses.find((container) => terminatedReason(container) === 'OOMKilled');
  if (oom) return { kind: 'oom', container: oom.name };
  const pulling = statuses.find((container) => IMAGE_REASONS.has(container.state?.waiting?.reason ?? ''));
  if (pulling) {
    const waiting = pulling.state!.waiting!;
    return {
      kind: 'image',
      image: pulling.image ?? imageOf(pod, pulling.name),
      reason: waiting.reason!,
      message: waiting.message ?? '',
    };
  }
  if (status.phase === 'Failed' && LOST_REASONS.has(status.reason ?? ''))
    return { kind: 'lost', reason: `${status.reason}: ${status.message ?? 'the pod was stopped'}` };
  const disruption = status.conditions?.find(
    (condition) => condition.type === 'DisruptionTarget' && condition.status === 'True',
  );
  if (pod.metadata?.deletionTimestamp || disruption)
    return { kind: 'lost', reason: disruption?.message ?? disruption?.reason ?? 'the pod is being deleted' };
  if (status.phase === 'Succeeded' || status.phase === 'Failed') {
    const task = status.containerStatuses?.find((container) => container.name === 'task');
    const terminated = task?.state?.terminated;
    const init = status.initContainerStatuses?.find((container) => (container.state?.terminated?.exitCode ?? 0) !== 0);
    if (init)
      return {
        kind: 'exited',
        exitCode: init.state!.terminated!.exitCode ?? null,
        message: `the runtime copy (init container ${init.name}) failed: ${init.state!.terminated!.message ?? init.state!.terminated!.reason ?? `exit ${init.state!.terminated!.exitCode}`}`,
      };
    return {
      kind: 'exited',
      exitCode: terminated?.exitCode ?? null,
      message: terminated?.message ?? terminated?.reason ?? `the pod ended ${status.phase}`,
    };
  }
  const scheduled = status.conditions?.find((condition) => condition.type === 'PodScheduled');
  if (scheduled?.status === 'False' && scheduled.reason === 'Unschedulable')
    return { kind: 'unschedulable', message: scheduled.message ?? 'no node can run the pod' };
  return { kind: 'running' };
}

function terminatedReason(container: V1ContainerStatus): string | undefined {
  return container.state?.terminated?.reason ?? container.lastState?.terminated?.reason;
}

function imageOf(pod: V1Pod, name: string): string {
  const spec = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])];
  return spec.find((container) => container.name === name)?.image ?? 'the image';
}
