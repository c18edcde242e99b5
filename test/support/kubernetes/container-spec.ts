import type { PodVolume } from './pod-volumes.js';
import type { ContainerLaunch } from './podman-containers.js';
import { parseQuantity } from './quantity.js';
import type { KubeObject } from './store.js';

/**
 * One Kubernetes container as one Podman container, the way kubelet maps it to a CRI runtime: `command` replaces
 * the image's entrypoint and `args` its command; env (values, Secret keys, the downward API's pod fields); the
 * security context (user and group, capabilities, no-new-privileges, read-only root, seccomp); CPU and memory
 * limits; volume mounts onto the pod's volume directories. What kubelet would refuse to start is a ConfigError,
 * shown as CreateContainerConfigError.
 */
export interface KubeContainer {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  workingDir?: string;
  env?: Array<{
    name: string;
    value?: string;
    valueFrom?: {
      secretKeyRef?: { name: string; key: string; optional?: boolean };
      fieldRef?: { fieldPath: string };
    };
  }>;
  envFrom?: Array<{ prefix?: string; secretRef?: { name: string; optional?: boolean } }>;
  resources?: { limits?: Record<string, string>; requests?: Record<string, string> };
  volumeMounts?: Array<{ name: string; mountPath: string; readOnly?: boolean; subPath?: string }>;
  securityContext?: SecurityContext;
  terminationMessagePolicy?: 'File' | 'FallbackToLogsOnError';
}

interface SecurityContext {
  runAsUser?: number;
  runAsGroup?: number;
  runAsNonRoot?: boolean;
  allowPrivilegeEscalation?: boolean;
  readOnlyRootFilesystem?: boolean;
  privileged?: boolean;
  capabilities?: { add?: string[]; drop?: string[] };
  seccompProfile?: { type: string };
}

export class ConfigError extends Error {}

export function containerLaunch(options: {
  pod: KubeObject;
  container: KubeContainer;
  volumes: PodVolume[];
  imageUser: string;
  secret: (name: string) => KubeObject | undefined;
  name: string;
  labels: Record<string, string>;
}): ContainerLaunch {
  const { pod, container, volumes } = options;
  const podSpec = pod.spec as { securityContext?: SecurityContext & { supplementalGroups?: number[] } };
  const security = { ...podSpec.securityContext, ...container.securityContext };
  const user = security.runAsUser;
  if (security.runAsNonRoot) {
    const imageUser = options.imageUser.split(':')[0] ?? '';
    const root = user === undefined ? imageUser === '' || imageUser === '0' || imageUser === 'root' : user === 0;
    if (root)
      throw new ConfigError(
        user === 0
          ? "container's runAsUser breaks non-root policy"
          : `container has runAsNonRoot and image will run as root (pod: "${pod.metadata.name}_${pod.metadata.namespace}(${pod.metadata.uid})", container: ${container.name})`,
      );
    if (user === undefined && !/^\d+$/.test(imageUser))
      throw new ConfigError(
        `container has runAsNonRoot and image has non-numeric user (${imageUser}), cannot verify user is non-root`,
      );
  }
  const limits = container.resources?.limits ?? {};
  const binds = (container.volumeMounts ?? []).map((mount) => {
    const volume = volumes.find((candidate) => candidate.name === mount.name);
    if (!volume) throw new ConfigError(`volume "${mount.name}" not found`);
    const source = mount.subPath ? `${volume.hostPath}/${mount.subPath}` : volume.hostPath;
    return `${source}:${mount.mountPath}${mount.readOnly || volume.readOnly ? ':ro' : ''}`;
  });
  const drop = security.capabilities?.drop ?? [];
  return {
    name: options.name,
    image: container.image,
    ...(container.command ? { entrypoint: container.command } : {}),
    ...(container.args ? { cmd: container.args } : {}),
    env: environment(pod, container, options.secret),
    ...(container.workingDir ? { workingDir: container.workingDir } : {}),
    ...(user !== undefined
      ? { user: `${user}${security.runAsGroup !== undefined ? `:${security.runAsGroup}` : ''}` }
      : {}),
    binds,
    ...(limits.memory ? { memoryBytes: parseQuantity(limits.memory) } : {}),
    ...(limits.cpu ? { cpus: parseQuantity(limits.cpu) } : {}),
    capDrop: drop,
    capAdd: security.capabilities?.add ?? [],
    noNewPrivileges: security.allowPrivilegeEscalation === false,
    readOnlyRootfs: security.readOnlyRootFilesystem === true,
    privileged: security.privileged === true,
    seccompUnconfined: security.seccompProfile?.type === 'Unconfined',
    labels: options.labels,
  };
}

function environment(
  pod: KubeObject,
  container: KubeContainer,
  secret: (name: string) => KubeObject | undefined,
): string[] {
  const variables = new Map<string, string>();
  // What kubelet always sets (the service links are off: the double has no Services).
  variables.set('HOSTNAME', pod.metadata.name ?? '');
  for (const source of container.envFrom ?? []) {
    if (!source.secretRef) continue;
    const found = secret(source.secretRef.name);
    if (!found) {
      if (source.secretRef.optional) continue;
      throw new ConfigError(`secret "${source.secretRef.name}" not found`);
    }
    for (const [key, value] of Object.entries(secretData(found))) variables.set(`${source.prefix ?? ''}${key}`, value);
  }
  for (const variable of container.env ?? []) {
    const reference = variable.valueFrom?.secretKeyRef;
    const field = variable.valueFrom?.fieldRef;
    if (reference) {
      const found = secret(reference.name);
      const value = found ? secretData(found)[reference.key] : undefined;
      if (value === undefined) {
        if (reference.optional) continue;
        throw new ConfigError(
          found
            ? `couldn't find key ${reference.key} in Secret ${pod.metadata.namespace}/${reference.name}`
            : `secret "${reference.name}" not found`,
        );
      }
      variables.set(variable.name, value);
    } else if (field) variables.set(variable.name, podField(pod, field.fieldPath));
    else variables.set(variable.name, expand(variable.value ?? '', variables));
  }
  return [...variables].map(([name, value]) => `${name}=${value}`);
}

function secretData(secret: KubeObject): Record<string, string> {
  const data = (secret.data as Record<string, string> | undefined) ?? {};
  return Object.fromEntries(
    Object.entries(data).map(([key, value]) => [key, Buffer.from(value, 'base64').toString('utf8')]),
  );
}

/** `$(NAME)` refers to a variable defined before it, as in Kubernetes; `$$(NAME)` is the literal. */
function expand(value: string, variables: Map<string, string>): string {
  return value.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (whole, name?: string) =>
    whole === '$$' ? '$' : name && variables.has(name) ? variables.get(name)! : whole,
  );
}

/** The downward API's fields a container may read as env. */
function podField(pod: KubeObject, fieldPath: string): string {
  const label = /^metadata\.labels\['(.+)'\]$/.exec(fieldPath);
  if (label) return pod.metadata.labels?.[label[1]!] ?? '';
  const annotation = /^metadata\.annotations\['(.+)'\]$/.exec(fieldPath);
  if (annotation) return pod.metadata.annotations?.[annotation[1]!] ?? '';
  const spec = pod.spec as { nodeName?: string; serviceAccountName?: string };
  const status = pod.status as { podIP?: string; hostIP?: string } | undefined;
  const fields: Record<string, string | undefined> = {
    'metadata.name': pod.metadata.name,
    'metadata.namespace': pod.metadata.namespace,
    'metadata.uid': pod.metadata.uid,
    'spec.nodeName': spec.nodeName,
    'spec.serviceAccountName': spec.serviceAccountName,
    'status.podIP': status?.podIP ?? '127.0.0.1',
    'status.hostIP': status?.hostIP ?? '127.0.0.1',
  };
  return fields[fieldPath] ?? '';
}
