import type { KubeObject } from './store.js';

/**
 * The defaults the API server fills in when it stores a Pod or a Job (the fields a client reads back and may not
 * have set): restart and DNS policies, grace period, service account, image pull policy, termination message
 * settings; a Job's counts, completion mode, selector and its template's controller labels.
 */
type Spec = Record<string, unknown>;

export function defaultPodSpec(spec: Spec): void {
  spec.restartPolicy ??= 'Always';
  spec.terminationGracePeriodSeconds ??= 30;
  spec.dnsPolicy ??= 'ClusterFirst';
  spec.schedulerName ??= 'default-scheduler';
  spec.securityContext ??= {};
  spec.enableServiceLinks ??= true;
  spec.preemptionPolicy ??= 'PreemptLowerPriority';
  spec.priority ??= 0;
  if (spec.serviceAccountName === undefined)
    spec.serviceAccountName = (spec.serviceAccount as string | undefined) ?? 'default';
  spec.serviceAccount ??= spec.serviceAccountName;
  for (const list of ['initContainers', 'containers'] as const)
    for (const container of (spec[list] as Spec[] | undefined) ?? []) {
      const image = String(container.image ?? '');
      const tag = image.includes('@') ? 'digest' : (/:([^/:]+)$/.exec(image)?.[1] ?? 'latest');
      container.imagePullPolicy ??= tag === 'latest' ? 'Always' : 'IfNotPresent';
      container.terminationMessagePath ??= '/dev/termination-log';
      container.terminationMessagePolicy ??= 'File';
      container.resources ??= {};
    }
}

export function defaultJob(job: KubeObject): void {
  const spec = job.spec as Spec;
  spec.backoffLimit ??= 6;
  spec.completions ??= 1;
  spec.parallelism ??= 1;
  spec.completionMode ??= 'NonIndexed';
  spec.suspend ??= false;
  spec.manualSelector ??= undefined;
  spec.podReplacementPolicy ??= 'TerminatingOrFailed';
  if (spec.manualSelector === undefined) delete spec.manualSelector;
  const uid = job.metadata.uid ?? '';
  const name = job.metadata.name ?? '';
  const template = spec.template as { metadata?: { labels?: Record<string, string> }; spec: Spec };
  template.metadata ??= {};
  template.metadata.labels = {
    ...template.metadata.labels,
    'batch.kubernetes.io/controller-uid': uid,
    'batch.kubernetes.io/job-name': name,
    'controller-uid': uid,
    'job-name': name,
  };
  spec.selector ??= { matchLabels: { 'batch.kubernetes.io/controller-uid': uid } };
  defaultPodSpec(template.spec);
  job.status ??= {};
}
