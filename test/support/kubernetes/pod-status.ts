import { now } from './store.js';

/**
 * A pod's status as kubelet writes it: phase, conditions, and one status per container (waiting with a reason,
 * running since, terminated with an exit code and a reason). Pure edits of a status object; kubelet.ts decides
 * when each happens.
 */
export interface ContainerState {
  waiting?: { reason: string; message?: string };
  running?: { startedAt: string };
  terminated?: {
    exitCode: number;
    reason: string;
    message?: string;
    startedAt?: string;
    finishedAt: string;
    containerID?: string;
  };
}

export interface ContainerStatus {
  name: string;
  image: string;
  imageID: string;
  containerID?: string;
  ready: boolean;
  started: boolean;
  restartCount: number;
  state: ContainerState;
  lastState: Record<string, never>;
}

export interface PodCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
  lastProbeTime: null;
  lastTransitionTime: string;
}

export interface PodStatus {
  phase: 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Unknown';
  conditions: PodCondition[];
  message?: string;
  reason?: string;
  hostIP?: string;
  hostIPs?: Array<{ ip: string }>;
  podIP?: string;
  podIPs?: Array<{ ip: string }>;
  startTime?: string;
  initContainerStatuses?: ContainerStatus[];
  containerStatuses?: ContainerStatus[];
  qosClass?: string;
}

export function setCondition(
  status: PodStatus,
  type: string,
  value: PodCondition['status'],
  reason?: string,
  message?: string,
): void {
  const existing = status.conditions.find((condition) => condition.type === type);
  const next: PodCondition = {
    type,
    status: value,
    ...(reason ? { reason } : {}),
    ...(message ? { message } : {}),
    lastProbeTime: null,
    lastTransitionTime: existing && existing.status === value ? existing.lastTransitionTime : now(),
  };
  if (existing) status.conditions.splice(status.conditions.indexOf(existing), 1, next);
  else status.conditions.push(next);
}

export function initialContainerStatuses(
  containers: Array<{ name: string; image: string }>,
  reason: 'PodInitializing' | 'ContainerCreating',
): ContainerStatus[] {
  return containers.map((container) => ({
    name: container.name,
    image: container.image,
    imageID: '',
    ready: false,
    started: false,
    restartCount: 0,
    state: { waiting: { reason } },
    lastState: {},
  }));
}

export function containerStatus(status: PodStatus, kind: 'init' | 'main', name: string): ContainerStatus | undefined {
  const list = kind === 'init' ? status.initContainerStatuses : status.containerStatuses;
  return list?.find((candidate) => candidate.name === name);
}

/** The QoS class the API server computes from requests and limits. */
export function qosClass(
  containers: Array<{ resources?: { limits?: Record<string, string>; requests?: Record<string, string> } }>,
): string {
  let any = false;
  let guaranteed = true;
  for (const container of containers) {
    const { limits = {}, requests = {} } = container.resources ?? {};
    if (Object.keys(limits).length || Object.keys(requests).length) any = true;
    for (const resource of ['cpu', 'memory']) {
      const limit = limits[resource];
      const request = requests[resource] ?? limit;
      if (!limit || request !== limit) guaranteed = false;
    }
  }
  if (!any) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

/** Podman's nanosecond timestamps at the API's second precision. */
export function apiTime(engineTime: string | undefined): string {
  if (!engineTime || engineTime.startsWith('0001-')) return now();
  const parsed = new Date(engineTime);
  return Number.isNaN(parsed.getTime()) ? now() : parsed.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** The pod is on its node with its volumes ready: its IPs, start time, and every container waiting to be created. */
export function markContainersCreating(
  status: PodStatus,
  inits: Array<{ name: string; image: string }>,
  containers: Array<{ name: string; image: string }>,
): void {
  // Host networking (kubelet.ts): the pod's address is the host's loopback.
  status.hostIP = '127.0.0.1';
  status.hostIPs = [{ ip: '127.0.0.1' }];
  status.podIP = '127.0.0.1';
  status.podIPs = [{ ip: '127.0.0.1' }];
  status.startTime = now();
  const names = (list: Array<{ name: string }>) => list.map((container) => container.name).join(' ');
  setCondition(status, 'PodReadyToStartContainers', 'True');
  if (inits.length)
    setCondition(
      status,
      'Initialized',
      'False',
      'ContainersNotInitialized',
      `containers with incomplete status: [${names(inits)}]`,
    );
  else setCondition(status, 'Initialized', 'True');
  const unready = `containers with unready status: [${names(containers)}]`;
  setCondition(status, 'Ready', 'False', 'ContainersNotReady', unready);
  setCondition(status, 'ContainersReady', 'False', 'ContainersNotReady', unready);
  if (inits.length) status.initContainerStatuses = initialContainerStatuses(inits, 'PodInitializing');
  status.containerStatuses = initialContainerStatuses(
    containers,
    inits.length ? 'PodInitializing' : 'ContainerCreating',
  );
}
