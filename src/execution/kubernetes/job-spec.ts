import type { V1Job, V1NetworkPolicy, V1PodTemplateSpec, V1Secret } from '@kubernetes/client-node';
import type { KubernetesSettings } from '../../config-kubernetes.js';
import { type ContainerLimits, type LimitRequest, runLimits } from '../sandbox/container/limits.js';
import { registryOf } from '../sandbox/container/pull.js';
import { executionLabels, jobName, LABEL } from './labels.js';
import { mergePodTemplate } from './pod-template.js';

/** Where the init container puts Hangar's runtime in the pod, and where the task container finds it. */
export const RUNTIME_MOUNT = '/opt/hangar';
/** The task container's writable work directory (workspaces, the one-shot worker's data). */
export const WORK_MOUNT = '/hangar-work';
/** The run user in every run pod: never root (the image's own users are not trusted to be unprivileged). */
export const POD_USER = 64000;

/** One execution's Job and what goes with it, as Hangar sends them (each object validated in the tests). */
export interface ExecutionObjects {
  job: V1Job;
  /** The execution's credential, the operator file and the model keys: read by the task container's env. */
  secret: V1Secret;
  /** The environment's registry credentials as an image pull Secret, when it names one. */
  pullSecret?: V1Secret;
  networkPolicy: V1NetworkPolicy;
}

export interface ExecutionJobRequest {
  settings: KubernetesSettings;
  runId: string;
  executionId: number;
  /** The run's image: the environment's, else HANGAR_DEFAULT_IMAGE. */
  image: string;
  /** The run's limits as the other backends compute them (container/limits.ts). */
  defaults: ContainerLimits;
  maximums: ContainerLimits;
  request: LimitRequest | undefined;
  /** The run's whole time: setup and harness limits, plus the clone (activeDeadlineSeconds). */
  deadlineSeconds: number;
  /** The server as the pod reaches it, and the credential valid for this execution alone. */
  serverUrl: string;
  credential: string;
  /** Whether the pod may reach the internet (setup commands with network, a harness that asks, clones). */
  network: boolean;
  /** `username:password` of the environment's registry secret, for the image pull Secret. */
  registryCredentials?: string;
  /** Environment variables the task container gets from the Secret: the operator's model keys. */
  secretEnv: Record<string, string>;
  /** The operator file's text (HANGAR_CONFIG), so that the pod's worker knows the same harnesses. */
  operatorFile?: string;
  /** The lease owner the Job's run is held by (annotated, for a server that reattaches). */
  owner: string;
}

/** Ranges a run pod never reaches with network (the other backends' rules): private, link-local, metadata, CGNAT. */
const PRIVATE_V4 = ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '169.254.0.0/16', '100.64.0.0/10', '127.0.0.0/8'];
const PRIVATE_V6 = ['fc00::/7', 'fe80::/10', '::1/128'];

export function executionObjects(request: ExecutionJobRequest): ExecutionObjects {
  const { settings, runId, executionId } = request;
  const name = jobName(runId, executionId);
  const labels = executionLabels(settings.instance, runId, executionId);
  const metadata = (suffix: string) => ({ name: `${name}${suffix}`, namespace: settings.namespace, labels });
  const secretName = `${name}-env`;
  const pullSecretName = `${name}-pull`;
  const secretData: Record<string, string> = {
    HANGAR_EXECUTION_CREDENTIAL: request.credential,
    ...request.secretEnv,
    ...(request.operatorFile !== undefined ? { 'hangar.yaml': request.operatorFile } : {}),
  };
  const secret: V1Secret = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: metadata('-env'),
    type: 'Opaque',
    stringData: secretData,
  };
  const pullSecret: V1Secret | undefined =
    request.registryCredentials === undefined
      ? undefined
      : {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: metadata('-pull'),
          type: 'kubernetes.io/dockerconfigjson',
          stringData: { '.dockerconfigjson': dockerConfig(request.image, request.registryCredentials) },
        };
  const { limits } = runLimits(request.defaults, request.maximums, request.request);
  const resources = {
    // Requests equal to limits: the scheduler places the run where its whole limit fits (Guaranteed QoS).
    requests: { memory: String(limits.memoryBytes), cpu: cpuQuantity(limits.cpus) },
    limits: { memory: String(limits.memoryBytes), cpu: cpuQuantity(limits.cpus) },
  };
  const containerSecurity = {
    allowPrivilegeEscalation: false,
    capabilities: { drop: ['ALL'] },
    runAsNonRoot: true,
    runAsUser: POD_USER,
    runAsGroup: POD_USER,
    seccompProfile: { type: 'RuntimeDefault' },
  };
  const volumeMounts = [
    { name: 'hangar-runtime', mountPath: RUNTIME_MOUNT },
    { name: 'hangar-work', mountPath: WORK_MOUNT },
  ];
  const env = [
    { name: 'HANGAR_URL', value: request.serverUrl },
    // The pod is the sandbox: setup and the harness run as processes of its task container.
    { name: 'HANGAR_SANDBOX', value: 'process' },
    { name: 'HANGAR_DATA_DIR', value: `${WORK_MOUNT}/data` },
    { name: 'HANGAR_WORKSPACE_DIR', value: `${WORK_MOUNT}/workspaces` },
    { name: 'HOME', value: `${WORK_MOUNT}/home` },
    // Hangar's Node first: a harness the operator file starts with `node` finds it in any image.
    { name: 'PATH', value: `${RUNTIME_MOUNT}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin` },
    { name: 'HANGAR_LOG_FORMAT', value: 'json' },
    ...(request.operatorFile !== undefined
      ? [{ name: 'HANGAR_CONFIG', value: `${WORK_MOUNT}/config/hangar.yaml` }]
      : []),
    ...Object.keys(secretData)
      .filter((key) => key !== 'hangar.yaml')
      .map((key) => ({ name: key, valueFrom: { secretKeyRef: { name: secretName, key } } })),
  ];
  const template: V1PodTemplateSpec = {
    // The namespace's NetworkPolicies (deploy/kubernetes/) let a pod reach the internet by this label.
    metadata: { labels: { ...labels, 'hangar.dev/network': request.network ? 'internet' : 'none' } },
    spec: {
      restartPolicy: 'Never',
      // A cancel deletes the Job: the pod's worker stops its execution at once, so the pod is gone within seconds.
      terminationGracePeriodSeconds: 10,
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      ...(settings.runtimeClassName ? { runtimeClassName: settings.runtimeClassName } : {}),
      ...(Object.keys(settings.nodeSelector).length > 0 ? { nodeSelector: settings.nodeSelector } : {}),
      ...(settings.tolerations.length > 0 ? { tolerations: settings.tolerations } : {}),
      ...(pullSecret ? { imagePullSecrets: [{ name: pullSecretName }] } : {}),
      securityContext: {
        runAsNonRoot: true,
        runAsUser: POD_USER,
        runAsGroup: POD_USER,
        fsGroup: POD_USER,
        seccompProfile: { type: 'RuntimeDefault' },
      },
      volumes: [
        { name: 'hangar-runtime', emptyDir: {} },
        { name: 'hangar-work', emptyDir: {} },
        ...(request.operatorFile !== undefined
          ? [{ name: 'hangar-config', secret: { secretName, items: [{ key: 'hangar.yaml', path: 'hangar.yaml' }] } }]
          : []),
      ],
      initContainers: [
        {
          name: 'hangar-runtime',
          image: settings.runtimeImage,
          // Hangar's image keeps its build in /app and Node on PATH: both are copied, so the task image needs neither.
          command: ['/bin/sh', '-c', RUNTIME_COPY],
          // A failed copy's words reach the pod's status (and the run's message) on a cluster.
          terminationMessagePolicy: 'FallbackToLogsOnError',
          volumeMounts: [{ name: 'hangar-runtime', mountPath: RUNTIME_MOUNT }],
          securityContext: containerSecurity,
          resources: { requests: { memory: '64Mi', cpu: '100m' }, limits: { memory: '256Mi', cpu: '1' } },
        },
      ],
      containers: [
        {
          name: 'task',
          image: request.image,
          command: [`${RUNTIME_MOUNT}/bin/node`, `${RUNTIME_MOUNT}/app/dist/main.js`, 'worker', '--execution'],
          workingDir: WORK_MOUNT,
          env,
          volumeMounts: [
            ...volumeMounts,
            ...(request.operatorFile !== undefined
              ? [{ name: 'hangar-config', mountPath: `${WORK_MOUNT}/config`, readOnly: true }]
              : []),
          ],
          resources,
          securityContext: containerSecurity,
        },
      ],
    },
  };
  const job: V1Job = {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { ...metadata(''), annotations: { 'hangar.dev/lease-owner': request.owner } },
    spec: {
      backoffLimit: 0,
      activeDeadlineSeconds: request.deadlineSeconds,
      // Hangar deletes a Job whose run ended well; one that failed stays this long for a post-mortem.
      ttlSecondsAfterFinished: settings.failedJobTtlSeconds,
      template: settings.podTemplate ? mergePodTemplate(settings.podTemplate, template) : template,
    },
  };
  return {
    job,
    secret,
    ...(pullSecret ? { pullSecret } : {}),
    networkPolicy: networkPolicy(settings, name, labels, runId, executionId, request.network),
  };
}

/**
 * Copies Node and Hangar's build into the shared volume. `cp -L` takes the file a symbolic link points to, so the
 * copy stands alone in an image that has neither. Of node_modules, only what the one-shot worker can load: the
 * image's /app/pod-runtime.txt (scripts/pod-runtime.mjs, made by the image's build) lists those packages; an older
 * image without the list has all of node_modules copied. Of dist/, all but the dashboard (dist/web).
 */
const RUNTIME_COPY = [
  'set -e',
  `node="$(command -v node)" || { echo "the runtime image has no node on its PATH: HANGAR_KUBERNETES_RUNTIME_IMAGE must be Hangar's image" >&2; exit 1; }`,
  'cd /app',
  `mkdir -p ${RUNTIME_MOUNT}/bin ${RUNTIME_MOUNT}/app/dist`,
  `cp -L "$node" ${RUNTIME_MOUNT}/bin/node`,
  `for entry in dist/* dist/.[!.]*; do if [ -e "$entry" ] && [ "$entry" != dist/web ]; then cp -R "$entry" ${RUNTIME_MOUNT}/app/dist/; fi; done`,
  `if [ -f pod-runtime.txt ]; then xargs cp -R --parents -t ${RUNTIME_MOUNT}/app < pod-runtime.txt; else cp -R node_modules package.json ${RUNTIME_MOUNT}/app/; fi`,
  `if [ -d examples ]; then cp -R examples ${RUNTIME_MOUNT}/app/; fi`,
].join('\n');

/**
 * The run pod's traffic: nothing comes in; out, always the Hangar API (the server's pods, or its range) and DNS; the
 * internet only with network, and never the cluster's private ranges or the metadata address.
 */
function networkPolicy(
  settings: KubernetesSettings,
  name: string,
  labels: Record<string, string>,
  runId: string,
  executionId: number,
  network: boolean,
): V1NetworkPolicy {
  const selector = { [LABEL.run]: labels[LABEL.run]!, [LABEL.execution]: String(executionId) };
  void runId;
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { name, namespace: settings.namespace, labels },
    spec: {
      podSelector: { matchLabels: selector },
      policyTypes: ['Ingress', 'Egress'],
      ingress: [],
      egress: [
        {
          to: [
            { podSelector: { matchLabels: settings.apiSelector } },
            ...(settings.apiCidr ? [{ ipBlock: { cidr: settings.apiCidr } }] : []),
          ],
        },
        {
          to: [{ namespaceSelector: {}, podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } } }],
          ports: [
            { protocol: 'UDP', port: 53 },
            { protocol: 'TCP', port: 53 },
          ],
        },
        ...(network
          ? [
              {
                to: [
                  { ipBlock: { cidr: '0.0.0.0/0', except: PRIVATE_V4 } },
                  { ipBlock: { cidr: '::/0', except: PRIVATE_V6 } },
                ],
              },
            ]
          : []),
      ],
    },
  };
}

/** A Kubernetes CPU quantity from a fraction of CPUs: millicores. */
function cpuQuantity(cpus: number): string {
  return `${Math.max(1, Math.round(cpus * 1000))}m`;
}

function dockerConfig(image: string, credentials: string): string {
  const colon = credentials.indexOf(':');
  const username = credentials.slice(0, colon);
  const password = credentials.slice(colon + 1);
  const registry = registryOf(image);
  const auth = Buffer.from(`${username}:${password}`).toString('base64');
  return JSON.stringify({ auths: { [registry]: { username, password, auth } } });
}
