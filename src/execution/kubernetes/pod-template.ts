import type { V1Container, V1PodSpec, V1PodTemplateSpec } from '@kubernetes/client-node';

type Json = Record<string, unknown>;

/**
 * The operator's pod template (HANGAR_KUBERNETES_POD_TEMPLATE) under Hangar's own: the operator adds labels,
 * annotations, volumes, tolerations, affinity, priority and the task container's extra env or mounts; Hangar's fields
 * win wherever both set one, so no template can bring back a service-account token, root, capabilities, another
 * restart policy or other limits. Containers other than `task` in the template are left out: a sidecar would keep the
 * Job from ever finishing.
 */
export function mergePodTemplate(operator: Json, hangar: V1PodTemplateSpec): V1PodTemplateSpec {
  const theirs = (operator.spec ?? {}) as Json;
  const ours = hangar.spec as V1PodSpec;
  const theirMetadata = (operator.metadata ?? {}) as { labels?: Json; annotations?: Json };
  const theirTask = ((theirs.containers ?? []) as V1Container[]).find((container) => container.name === 'task');
  const list = <T>(key: string, own: T[] | undefined): T[] | undefined => {
    const merged = [...((theirs[key] as T[] | undefined) ?? []), ...(own ?? [])];
    return merged.length > 0 ? merged : undefined;
  };
  const { containers: _containers, initContainers: _init, ...theirRest } = theirs;
  const spec: V1PodSpec = {
    ...(theirRest as Partial<V1PodSpec>),
    ...ours,
    nodeSelector: { ...((theirs.nodeSelector as Record<string, string>) ?? {}), ...(ours.nodeSelector ?? {}) },
    tolerations: list('tolerations', ours.tolerations),
    volumes: list('volumes', ours.volumes),
    imagePullSecrets: list('imagePullSecrets', ours.imagePullSecrets),
    containers: ours.containers.map((container) =>
      container.name === 'task' && theirTask
        ? {
            ...container,
            env: [...(theirTask.env ?? []), ...(container.env ?? [])],
            volumeMounts: [...(theirTask.volumeMounts ?? []), ...(container.volumeMounts ?? [])],
          }
        : container,
    ),
  };
  for (const key of ['nodeSelector', 'tolerations', 'volumes', 'imagePullSecrets'] as const) {
    const value = spec[key];
    if (value === undefined || (typeof value === 'object' && Object.keys(value).length === 0)) delete spec[key];
  }
  return {
    metadata: {
      ...hangar.metadata,
      labels: { ...((theirMetadata.labels as Record<string, string>) ?? {}), ...(hangar.metadata?.labels ?? {}) },
      ...(theirMetadata.annotations ? { annotations: theirMetadata.annotations as Record<string, string> } : {}),
    },
    spec,
  };
}
