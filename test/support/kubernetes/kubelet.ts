import { ConfigError, containerLaunch, type KubeContainer } from './container-spec.js';
import type { EventRecorder } from './events.js';
import type { Faults } from './faults.js';
import {
  apiTime,
  containerStatus,
  markContainersCreating,
  type PodStatus,
  qosClass,
  setCondition,
} from './pod-status.js';
import { type PodVolume, prepareVolumes, removeVolumes, VolumeError } from './pod-volumes.js';
import { DOUBLE_LABEL, DOUBLE_PID_LABEL, type PodmanContainers } from './podman-containers.js';
import { resourceTypeOfKind } from './resources.js';
import { type KubeObject, now, type ObjectStore } from './store.js';

/**
 * The double's scheduler and kubelet on its one node: each pod is placed (or held Unschedulable by a fault), its
 * init containers run in order, then its containers together, each as a Podman container on the host's network;
 * the pod's status follows as kubelet reports it. A pod being deleted has its containers stopped within its grace
 * period, then goes. Host networking: the pods must reach a test server on the host's loopback (a run's one-shot
 * worker dials back to Hangar), and Podman's bridge networks here cannot reach it; the run pods' NetworkPolicy is
 * stored and validated, not enforced.
 */
const POD = resourceTypeOfKind('Pod');
const SECRET = resourceTypeOfKind('Secret');

interface PodRun {
  pod: KubeObject;
  containers: Map<string, string>;
  /** The double stopped it (deletion, deadline, node lost): an exit 137 then is not an OOM kill. */
  stopping: boolean;
  /** The node is gone: kubelet reports nothing more. */
  nodeLost: boolean;
  aborted: Promise<void>;
  abort: () => void;
  finished: Promise<void>;
}

export class Kubelet {
  private readonly runs = new Map<string, PodRun>();
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly deps: {
      store: ObjectStore;
      podman: PodmanContainers;
      events: EventRecorder;
      faults: Faults;
      /** Where the pods' volume directories are made. */
      root: string;
      nodeName: string;
      doubleId: string;
    },
  ) {}

  start(): void {
    this.unsubscribe = this.deps.store.subscribe((change) => {
      // Deletion comes through the garbage collector (deletePod), which knows the grace period asked for.
      if (change.type === POD && change.event === 'ADDED') queueMicrotask(() => this.run(change.object));
    });
  }

  async stop(): Promise<void> {
    this.unsubscribe?.();
    await Promise.all([...this.runs.values()].map((run) => this.terminate(run, 0)));
  }

  /** The Podman container of a pod's container, for its log. */
  containerId(podUid: string, container: string): string | undefined {
    return this.runs.get(podUid)?.containers.get(container);
  }

  /**
   * The pod's node is lost: its containers die at once, kubelet says nothing more, the taint manager marks the pod
   * for deletion (DisruptionTarget, an Event) and the pod garbage collector removes it.
   */
  async loseNode(pod: KubeObject): Promise<void> {
    const run = this.runs.get(pod.metadata.uid ?? '');
    if (run) {
      run.nodeLost = true;
      run.stopping = true;
      run.abort();
      await Promise.all([...run.containers.values()].map((id) => this.deps.podman.stop(id, 0)));
      await run.finished;
    }
    const namespace = pod.metadata.namespace;
    const name = pod.metadata.name ?? '';
    const marked = this.deps.store.update(POD, namespace, name, (object) => {
      const status = object.status as PodStatus;
      setCondition(
        status,
        'DisruptionTarget',
        'True',
        'DeletionByTaintManager',
        'Taint manager: deleting due to NoExecute taint',
      );
      setCondition(status, 'Ready', 'False', 'NodeNotReady', 'Node is not ready');
      object.metadata.deletionTimestamp = now();
      object.metadata.deletionGracePeriodSeconds = 0;
    });
    this.deps.events.record(
      marked,
      'Normal',
      'TaintManagerEviction',
      `Marking for deletion Pod ${namespace}/${name}`,
      'taint-eviction-controller',
    );
    await this.cleanUp(marked);
  }

  private async run(pod: KubeObject): Promise<void> {
    // Deleted before kubelet saw it: nothing to run.
    if (this.deps.store.find(POD, pod.metadata.namespace, pod.metadata.name ?? '')?.metadata.uid !== pod.metadata.uid)
      return;
    let finish!: () => void;
    let abort!: () => void;
    const run: PodRun = {
      pod,
      containers: new Map(),
      stopping: false,
      nodeLost: false,
      aborted: new Promise((resolve) => (abort = resolve)),
      abort: () => abort(),
      finished: new Promise((resolve) => (finish = resolve)),
    };
    this.runs.set(pod.metadata.uid ?? '', run);
    try {
      await this.runPod(run);
    } catch (error) {
      if (!run.stopping)
        this.writeStatus(run, (status) => {
          status.phase = 'Failed';
          status.message = `the Kubernetes double could not run the pod: ${(error as Error).message}`;
        });
    } finally {
      finish();
    }
  }

  private async runPod(run: PodRun): Promise<void> {
    const spec = run.pod.spec as { containers: KubeContainer[]; initContainers?: KubeContainer[] };
    const inits = spec.initContainers ?? [];
    this.writeStatus(run, (status) => {
      status.phase = 'Pending';
      status.qosClass = qosClass([...inits, ...spec.containers]);
    });
    if (!(await this.schedule(run))) return;
    let volumes: PodVolume[];
    try {
      volumes = prepareVolumes(run.pod, this.deps.root, (name) => this.secret(run.pod.metadata.namespace, name));
    } catch (error) {
      if (!(error instanceof VolumeError)) throw error;
      this.deps.events.record(run.pod, 'Warning', 'FailedMount', error.message, 'kubelet');
      return;
    }
    this.writeStatus(run, (status) => markContainersCreating(status, inits, spec.containers));
    for (const init of inits) {
      const exit = await this.runContainer(run, init, 'init', volumes);
      if (exit === undefined) return;
      if (exit !== 0) {
        this.writeStatus(run, (status) => {
          status.phase = 'Failed';
        });
        return;
      }
    }
    if (inits.length) this.writeStatus(run, (status) => setCondition(status, 'Initialized', 'True'));
    const exits = await Promise.all(
      spec.containers.map((container) => this.runContainer(run, container, 'main', volumes)),
    );
    if (exits.some((exit) => exit === undefined)) return;
    this.writeStatus(run, (status) => {
      status.phase = exits.every((exit) => exit === 0) ? 'Succeeded' : 'Failed';
      setCondition(status, 'PodReadyToStartContainers', 'False');
      setCondition(status, 'Ready', 'False', 'PodCompleted');
      setCondition(status, 'ContainersReady', 'False', 'PodCompleted');
    });
  }

  /** Places the pod on the node; false when it was deleted while a fault held it Unschedulable. */
  private async schedule(run: PodRun): Promise<boolean> {
    const { pod } = run;
    let rule = this.deps.faults.unschedulableRule(pod);
    while (rule) {
      const message = rule.message;
      this.writeStatus(run, (status) => {
        setCondition(status, 'PodScheduled', 'False', 'Unschedulable', message);
      });
      this.deps.events.record(pod, 'Warning', 'FailedScheduling', message, 'default-scheduler');
      await Promise.race([rule.released, run.aborted]);
      if (run.stopping) return false;
      rule = this.deps.faults.unschedulableRule(pod);
    }
    if (run.stopping) return false;
    this.deps.store.update(POD, pod.metadata.namespace, pod.metadata.name ?? '', (object) => {
      (object.spec as { nodeName?: string }).nodeName = this.deps.nodeName;
      setCondition(object.status as PodStatus, 'PodScheduled', 'True');
    });
    this.deps.events.record(
      pod,
      'Normal',
      'Scheduled',
      `Successfully assigned ${pod.metadata.namespace}/${pod.metadata.name} to ${this.deps.nodeName}`,
      'default-scheduler',
    );
    return true;
  }

  /** Runs one container to its end: its exit code, or undefined when it could not start (its status says why). */
  private async runContainer(
    run: PodRun,
    container: KubeContainer,
    kind: 'init' | 'main',
    volumes: PodVolume[],
  ): Promise<number | undefined> {
    const { podman, events, faults } = this.deps;
    const image = faults.missingImages.has(container.image) ? undefined : await podman.image(container.image);
    if (run.stopping) return undefined;
    if (!image) {
      const reason = `Failed to pull image "${container.image}": rpc error: code = NotFound desc = failed to pull and unpack image "${container.image}": not found`;
      events.record(run.pod, 'Normal', 'Pulling', `Pulling image "${container.image}"`, 'kubelet');
      this.setState(run, kind, container.name, { waiting: { reason: 'ErrImagePull', message: reason } });
      events.record(run.pod, 'Warning', 'Failed', reason, 'kubelet');
      events.record(run.pod, 'Warning', 'Failed', 'Error: ErrImagePull', 'kubelet');
      // kubelet backs off and retries for as long as the pod lives; with no registry, every retry fails the same.
      this.setState(run, kind, container.name, {
        waiting: { reason: 'ImagePullBackOff', message: `Back-off pulling image "${container.image}"` },
      });
      events.record(run.pod, 'Normal', 'BackOff', `Back-off pulling image "${container.image}"`, 'kubelet');
      events.record(run.pod, 'Warning', 'Failed', 'Error: ImagePullBackOff', 'kubelet');
      return undefined;
    }
    events.record(
      run.pod,
      'Normal',
      'Pulled',
      `Container image "${container.image}" already present on machine`,
      'kubelet',
    );
    let id: string;
    try {
      const launch = containerLaunch({
        pod: this.current(run),
        container,
        volumes,
        imageUser: image.user,
        secret: (name) => this.secret(run.pod.metadata.namespace, name),
        name: `k8s_${container.name}_${run.pod.metadata.name}_${run.pod.metadata.namespace}_${(run.pod.metadata.uid ?? '').slice(0, 8)}`,
        labels: {
          [DOUBLE_LABEL]: this.deps.doubleId,
          [DOUBLE_PID_LABEL]: String(process.pid),
          'io.kubernetes.pod.uid': run.pod.metadata.uid ?? '',
        },
      });
      id = await podman.create(launch);
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      this.setState(run, kind, container.name, {
        waiting: { reason: 'CreateContainerConfigError', message: error.message },
      });
      events.record(run.pod, 'Warning', 'Failed', `Error: ${error.message}`, 'kubelet');
      return undefined;
    }
    run.containers.set(container.name, id);
    events.record(run.pod, 'Normal', 'Created', `Created container: ${container.name}`, 'kubelet');
    if (run.stopping) return undefined;
    const startedAt = apiTime(await podman.start(id));
    events.record(run.pod, 'Normal', 'Started', `Started container ${container.name}`, 'kubelet');
    this.writeStatus(run, (status) => {
      const entry = containerStatus(status, kind, container.name);
      if (entry)
        Object.assign(entry, {
          state: { running: { startedAt } },
          started: true,
          ready: kind === 'main',
          imageID: image.id,
          containerID: `podman://${id}`,
        });
      if (kind === 'main' && status.containerStatuses?.every((candidate) => candidate.ready)) {
        status.phase = 'Running';
        setCondition(status, 'Ready', 'True');
        setCondition(status, 'ContainersReady', 'True');
      }
    });
    const end = await podman.wait(id);
    const limited = Boolean(container.resources?.limits?.memory);
    // Podman 4.3 reports OOMKilled false for the kernel's OOM kills (FIELD-NOTES): a SIGKILL the double did not send,
    // in a container with a memory limit, is read as one.
    const oom = end.oomKilled || (end.exitCode === 137 && limited && !run.stopping);
    const reason = end.exitCode === 0 ? 'Completed' : oom ? 'OOMKilled' : 'Error';
    const message =
      end.exitCode !== 0 && container.terminationMessagePolicy === 'FallbackToLogsOnError'
        ? await this.logTail(id)
        : undefined;
    if (!run.nodeLost)
      this.writeStatus(run, (status) => {
        const entry = containerStatus(status, kind, container.name);
        if (entry)
          Object.assign(entry, {
            ready: false,
            started: false,
            state: {
              terminated: {
                exitCode: end.exitCode,
                reason,
                ...(message ? { message } : {}),
                startedAt,
                finishedAt: apiTime(end.finishedAt),
                containerID: `podman://${id}`,
              },
            },
          });
      });
    return end.exitCode;
  }

  /** A failed container's message under FallbackToLogsOnError: its log's last 80 lines, at most 2048 bytes. */
  private async logTail(id: string): Promise<string | undefined> {
    const chunks: Buffer[] = [];
    for await (const chunk of await this.deps.podman.logs(id, { follow: false, tailLines: 80 }))
      chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks);
    return text.length === 0 ? undefined : text.subarray(Math.max(0, text.length - 2048)).toString('utf8');
  }

  private async terminate(run: PodRun, graceSeconds: number): Promise<void> {
    if (run.stopping) return;
    run.stopping = true;
    run.abort();
    await Promise.all([...run.containers.values()].map((id) => this.deps.podman.stop(id, graceSeconds)));
    await run.finished;
    const current = this.deps.store.find(POD, run.pod.metadata.namespace, run.pod.metadata.name ?? '');
    if (current && current.metadata.uid === run.pod.metadata.uid) {
      const phase = (current.status as PodStatus).phase;
      if (phase === 'Pending' || phase === 'Running')
        this.writeStatus(run, (status) => {
          status.phase = 'Failed';
        });
    }
    await this.cleanUp(run.pod);
  }

  /** Removes the pod's containers, volumes and object (a pod that finished keeps them until it is deleted). */
  private async cleanUp(pod: KubeObject): Promise<void> {
    const uid = pod.metadata.uid ?? '';
    const run = this.runs.get(uid);
    await Promise.all([...(run?.containers.values() ?? [])].map((id) => this.deps.podman.remove(id)));
    removeVolumes(pod, this.deps.root);
    this.runs.delete(uid);
    const current = this.deps.store.find(POD, pod.metadata.namespace, pod.metadata.name ?? '');
    if (current && current.metadata.uid === uid)
      this.deps.store.remove(POD, pod.metadata.namespace, pod.metadata.name ?? '');
  }

  /** Deletion of a pod the kubelet never saw run (or whose run is over): containers stopped, then gone. */
  async deletePod(pod: KubeObject, graceSeconds: number): Promise<void> {
    const run = this.runs.get(pod.metadata.uid ?? '');
    if (run) await this.terminate(run, graceSeconds);
    else await this.cleanUp(pod);
  }

  isRunning(podUid: string): boolean {
    return this.runs.has(podUid);
  }

  private setState(run: PodRun, kind: 'init' | 'main', name: string, state: Record<string, unknown>): void {
    if (run.nodeLost) return;
    this.writeStatus(run, (status) => {
      const entry = containerStatus(status, kind, name);
      if (entry) entry.state = state;
    });
  }

  private writeStatus(run: PodRun, change: (status: PodStatus) => void): void {
    const { namespace, name, uid } = run.pod.metadata;
    const current = this.deps.store.find(POD, namespace, name ?? '');
    if (!current || current.metadata.uid !== uid) return;
    this.deps.store.update(POD, namespace, name ?? '', (object) => {
      object.status ??= { phase: 'Pending', conditions: [] };
      (object.status as PodStatus).conditions ??= [];
      change(object.status as PodStatus);
    });
  }

  private current(run: PodRun): KubeObject {
    return this.deps.store.find(POD, run.pod.metadata.namespace, run.pod.metadata.name ?? '') ?? run.pod;
  }

  private secret(namespace: string | undefined, name: string): KubeObject | undefined {
    return this.deps.store.find(SECRET, namespace, name);
  }
}
