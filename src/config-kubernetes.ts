import fs from 'node:fs';
import { parse as parseYaml } from 'yaml';

/**
 * The settings of the Kubernetes backend (HANGAR_SANDBOX=kubernetes, docs/kubernetes.md): where run Jobs go and what
 * their pods get. Parsed with the rest of the configuration (config.ts), and only read when the sandbox is kubernetes.
 */
export interface KubernetesSettings {
  /** `KUBECONFIG`: the client's configuration file; unset, the pod's service account (in a cluster) or ~/.kube/config. */
  kubeconfig: string | undefined;
  /** `HANGAR_KUBERNETES_NAMESPACE`: where run Jobs are created (default: the service account's, else `default`). */
  namespace: string;
  /** `HANGAR_KUBERNETES_RUNTIME_IMAGE`: Hangar's own image; its init container copies Node and dist/ into the pod. */
  runtimeImage: string | undefined;
  /**
   * `HANGAR_KUBERNETES_INSTANCE`: the `hangar.dev/instance` label of this installation's Jobs. Every replica of one
   * installation shares it, so a server that restarts finds its Jobs again by it.
   */
  instance: string;
  /** `HANGAR_KUBERNETES_SERVER_URL`: the server as run pods reach it (default: HANGAR_PUBLIC_URL). */
  serverUrl: string | undefined;
  /** `HANGAR_KUBERNETES_RUNTIME_CLASS`: the pods' runtimeClassName (gVisor, Kata), or none. */
  runtimeClassName: string | undefined;
  /** `HANGAR_KUBERNETES_NODE_SELECTOR`: `key=value,key=value`. */
  nodeSelector: Record<string, string>;
  /** `HANGAR_KUBERNETES_TOLERATIONS`: a JSON array of tolerations. */
  tolerations: Array<Record<string, unknown>>;
  /** `HANGAR_KUBERNETES_POD_TEMPLATE`: a file (YAML or JSON) whose pod template is merged under Hangar's own. */
  podTemplate: Record<string, unknown> | undefined;
  /** `HANGAR_KUBERNETES_UNSCHEDULABLE_SECONDS`: how long a run pod may stay unschedulable before the run ends ERROR. */
  unschedulableSeconds: number;
  /** `HANGAR_KUBERNETES_FAILED_JOB_TTL_SECONDS`: how long a failed Job stays for a post-mortem (ttlSecondsAfterFinished). */
  failedJobTtlSeconds: number;
  /** `HANGAR_KUBERNETES_API_SELECTOR`: the labels of Hangar's server pods, which run pods may always reach. */
  apiSelector: Record<string, string>;
  /** `HANGAR_KUBERNETES_API_CIDR`: the server's address range when it runs outside the cluster (a team's own cluster). */
  apiCidr: string | undefined;
}

type Env = Record<string, string | undefined>;

const SERVICE_ACCOUNT_NAMESPACE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';
/** A label value (and a namespace's name, more strictly): what Kubernetes accepts. */
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

export function kubernetesSettings(env: Env, fail: (message: string) => never): KubernetesSettings {
  const text = (name: string) => {
    const value = env[name]?.trim();
    return value === undefined || value === '' ? undefined : value;
  };
  const seconds = (name: string, fallback: number, min: number, max: number) => {
    const raw = text(name);
    if (raw === undefined) return fallback;
    const value = Number(raw);
    if (!/^\d+$/.test(raw) || value < min || value > max)
      fail(`${name} must be a whole number of seconds between ${min} and ${max}, got "${raw}"`);
    return value;
  };
  const namespace = text('HANGAR_KUBERNETES_NAMESPACE') ?? serviceAccountNamespace() ?? 'default';
  if (!DNS_LABEL.test(namespace) || namespace.length > 63)
    fail(`HANGAR_KUBERNETES_NAMESPACE must be a namespace name (lower-case letters, digits, -), got "${namespace}"`);
  const instance = text('HANGAR_KUBERNETES_INSTANCE') ?? 'hangar';
  if (!LABEL_VALUE.test(instance) || instance.length > 63)
    fail(`HANGAR_KUBERNETES_INSTANCE must be a label value (at most 63 letters, digits, -, _ or .), got "${instance}"`);
  const serverUrl = text('HANGAR_KUBERNETES_SERVER_URL');
  if (serverUrl !== undefined && !/^https?:\/\/[^\s]+$/.test(serverUrl))
    fail(`HANGAR_KUBERNETES_SERVER_URL must be an http(s) URL, got "${serverUrl}"`);
  return {
    kubeconfig: text('KUBECONFIG'),
    namespace,
    runtimeImage: text('HANGAR_KUBERNETES_RUNTIME_IMAGE'),
    instance,
    serverUrl: serverUrl?.replace(/\/+$/, ''),
    runtimeClassName: text('HANGAR_KUBERNETES_RUNTIME_CLASS'),
    nodeSelector: pairs(text('HANGAR_KUBERNETES_NODE_SELECTOR'), 'HANGAR_KUBERNETES_NODE_SELECTOR', fail),
    tolerations: tolerations(text('HANGAR_KUBERNETES_TOLERATIONS'), fail),
    podTemplate: podTemplate(text('HANGAR_KUBERNETES_POD_TEMPLATE'), fail),
    unschedulableSeconds: seconds('HANGAR_KUBERNETES_UNSCHEDULABLE_SECONDS', 300, 1, 24 * 3600),
    failedJobTtlSeconds: seconds('HANGAR_KUBERNETES_FAILED_JOB_TTL_SECONDS', 3600, 0, 30 * 24 * 3600),
    apiSelector: pairs(
      text('HANGAR_KUBERNETES_API_SELECTOR') ?? 'app.kubernetes.io/name=hangar',
      'HANGAR_KUBERNETES_API_SELECTOR',
      fail,
    ),
    apiCidr: text('HANGAR_KUBERNETES_API_CIDR'),
  };
}

function serviceAccountNamespace(): string | undefined {
  try {
    return fs.readFileSync(SERVICE_ACCOUNT_NAMESPACE, 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

function pairs(raw: string | undefined, name: string, fail: (message: string) => never): Record<string, string> {
  const result: Record<string, string> = {};
  if (raw === undefined) return result;
  for (const entry of raw.split(',')) {
    const [key, value, ...rest] = entry.split('=').map((part) => part.trim());
    if (!key || value === undefined || rest.length > 0 || !LABEL_VALUE.test(value))
      fail(`${name} must be key=value pairs separated by commas, got "${raw}"`);
    result[key] = value;
  }
  return result;
}

function tolerations(raw: string | undefined, fail: (message: string) => never): Array<Record<string, unknown>> {
  if (raw === undefined) return [];
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    fail(`HANGAR_KUBERNETES_TOLERATIONS must be a JSON array of tolerations, got "${raw}"`);
  }
  if (
    !Array.isArray(value) ||
    value.some((entry) => typeof entry !== 'object' || entry === null || Array.isArray(entry))
  )
    fail('HANGAR_KUBERNETES_TOLERATIONS must be a JSON array of objects (tolerations)');
  return value as Array<Record<string, unknown>>;
}

/** The operator's pod template: a PodTemplateSpec (`metadata`, `spec`) or a bare PodSpec, as YAML or JSON. */
function podTemplate(file: string | undefined, fail: (message: string) => never): Record<string, unknown> | undefined {
  if (file === undefined) return undefined;
  let value: unknown;
  try {
    value = parseYaml(fs.readFileSync(file, 'utf8'));
  } catch (error) {
    fail(`HANGAR_KUBERNETES_POD_TEMPLATE: cannot read ${file}: ${(error as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    fail(`HANGAR_KUBERNETES_POD_TEMPLATE: ${file} must hold a pod template (an object with metadata and spec)`);
  const object = value as Record<string, unknown>;
  // A whole PodTemplate object (kind: PodTemplate) carries its template under `template`.
  const template = (object.template as Record<string, unknown> | undefined) ?? object;
  return 'spec' in template || 'metadata' in template ? template : { spec: template };
}
