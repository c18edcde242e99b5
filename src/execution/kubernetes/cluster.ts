import {
  ApiException,
  BatchV1Api,
  CoreV1Api,
  type Informer,
  KubeConfig,
  makeInformer,
  NetworkingV1Api,
  type ObjectCache,
  type V1Job,
  type V1OwnerReference,
  type V1Pod,
  type V1Secret,
} from '@kubernetes/client-node';
import type { ExecutionObjects } from './job-spec.js';
import { serverSelector } from './labels.js';

/**
 * The calls the Kubernetes backend makes, through the official client: an execution's objects created and deleted,
 * and the informers (list, then watch from its resourceVersion; a watch that ends, even with 410 Gone, lists again)
 * of one installation's Jobs and pods. The kubeconfig is the pod's service account in a cluster, else KUBECONFIG or
 * ~/.kube/config (KubeConfig.loadFromDefault).
 */
export class Cluster {
  readonly config: KubeConfig;
  readonly core: CoreV1Api;
  readonly batch: BatchV1Api;
  private readonly networking: NetworkingV1Api;

  constructor(
    readonly namespace: string,
    private readonly instance: string,
    /** KUBECONFIG as the configuration read it; unset: the client's defaults. */
    kubeconfig?: string,
  ) {
    this.config = loadConfig(kubeconfig);
    this.core = this.config.makeApiClient(CoreV1Api);
    this.batch = this.config.makeApiClient(BatchV1Api);
    this.networking = this.config.makeApiClient(NetworkingV1Api);
  }

  /**
   * Creates an execution's objects: its Secrets first (the pod reads them as it starts), then the Job, then the
   * NetworkPolicy, and hands the Secrets to the Job (ownerReferences) so that they go with it. The policy is owned
   * by the Job from its creation. A Secret left by a failure in between carries the run's labels: the reconcile
   * removes it with the Job it was for.
   */
  async create(objects: ExecutionObjects): Promise<V1Job> {
    const namespace = this.namespace;
    const secrets = [objects.secret, ...(objects.pullSecret ? [objects.pullSecret] : [])];
    for (const secret of secrets) await this.putSecret(secret);
    const job = await this.createOrAdoptJob(objects.job);
    const owner: V1OwnerReference = {
      apiVersion: 'batch/v1',
      kind: 'Job',
      name: job.metadata!.name!,
      uid: job.metadata!.uid!,
      blockOwnerDeletion: true,
    };
    await ignoreConflict(
      this.networking.createNamespacedNetworkPolicy({
        namespace,
        body: { ...objects.networkPolicy, metadata: { ...objects.networkPolicy.metadata, ownerReferences: [owner] } },
      }),
    );
    for (const secret of secrets)
      await this.updateSecret(secret.metadata!.name!, (current) => ({
        ...current,
        metadata: { ...current.metadata, ownerReferences: [owner] },
      }));
    return job;
  }

  /**
   * The execution's Job, created; or, when the run was claimed again for the same execution (its lease lapsed and
   * it was queued again before its agent started), the Job the earlier claim created: its name, credential and
   * objects are the execution's, so it is this claim's too. One being deleted cannot be: the claim fails, retryable.
   */
  private async createOrAdoptJob(body: V1Job): Promise<V1Job> {
    const name = body.metadata!.name!;
    try {
      return await this.batch.createNamespacedJob({ namespace: this.namespace, body });
    } catch (error) {
      if (!isConflict(error)) throw error;
    }
    const existing = await this.batch.readNamespacedJob({ name, namespace: this.namespace });
    if (existing.metadata?.deletionTimestamp)
      throw new Error(`The Job ${name} of this execution, from an earlier claim, is still being deleted`);
    return existing;
  }

  /** Creates a Secret; one left by an earlier claim of the execution gets this content. */
  private async putSecret(secret: V1Secret): Promise<void> {
    try {
      await this.core.createNamespacedSecret({ namespace: this.namespace, body: secret });
    } catch (error) {
      if (!isConflict(error)) throw error;
      await this.updateSecret(secret.metadata!.name!, (current) => ({
        ...secret,
        metadata: { ...secret.metadata, resourceVersion: current.metadata!.resourceVersion },
      }));
    }
  }

  /** Read, change, replace at the version read; a write in between (409 Conflict) is read again, a few times. */
  private async updateSecret(name: string, change: (current: V1Secret) => V1Secret): Promise<void> {
    const namespace = this.namespace;
    for (let attempt = 1; ; attempt++) {
      const current = await this.core.readNamespacedSecret({ name, namespace });
      try {
        await this.core.replaceNamespacedSecret({ name, namespace, body: change(current) });
        return;
      } catch (error) {
        if (!isConflict(error) || attempt === 5) throw error;
      }
    }
  }

  /** Deletes a Job with its pod first (foreground propagation); one already gone is not an error. */
  async deleteJob(name: string): Promise<void> {
    await ignoreNotFound(
      this.batch.deleteNamespacedJob({ name, namespace: this.namespace, propagationPolicy: 'Foreground' }),
    );
  }

  /** Deletes a Secret of an execution whose Job was never created (or is gone): its owner cannot take it along. */
  async deleteSecret(name: string): Promise<void> {
    await ignoreNotFound(this.core.deleteNamespacedSecret({ name, namespace: this.namespace }));
  }

  async listSecrets(): Promise<Array<{ name: string; labels: Record<string, string>; owned: boolean }>> {
    const list = await this.core.listNamespacedSecret({
      namespace: this.namespace,
      labelSelector: serverSelector(this.instance),
    });
    return list.items.map((secret) => ({
      name: secret.metadata!.name!,
      labels: secret.metadata!.labels ?? {},
      owned: (secret.metadata!.ownerReferences ?? []).length > 0,
    }));
  }

  async listJobs(): Promise<V1Job[]> {
    const list = await this.batch.listNamespacedJob({
      namespace: this.namespace,
      labelSelector: serverSelector(this.instance),
    });
    return list.items;
  }

  jobInformer(): Informer<V1Job> & ObjectCache<V1Job> {
    const namespace = this.namespace;
    const labelSelector = serverSelector(this.instance);
    return makeInformer(
      this.config,
      `/apis/batch/v1/namespaces/${namespace}/jobs`,
      () => this.batch.listNamespacedJob({ namespace, labelSelector }),
      labelSelector,
    );
  }

  podInformer(): Informer<V1Pod> & ObjectCache<V1Pod> {
    const namespace = this.namespace;
    const labelSelector = serverSelector(this.instance);
    return makeInformer(
      this.config,
      `/api/v1/namespaces/${namespace}/pods`,
      () => this.core.listNamespacedPod({ namespace, labelSelector }),
      labelSelector,
    );
  }
}

function loadConfig(file: string | undefined): KubeConfig {
  const config = new KubeConfig();
  if (file) config.loadFromFile(file);
  else config.loadFromDefault();
  return config;
}

/** Whether the API server refused a call with `code` (409 Conflict or AlreadyExists, 404 Not Found, ...). */
function answered(error: unknown, code: number): boolean {
  return error instanceof ApiException && error.code === code;
}

function isConflict(error: unknown): boolean {
  return answered(error, 409);
}

/** An object that already exists (409) is the one wanted: created by an earlier claim of the same execution. */
async function ignoreConflict(call: Promise<unknown>): Promise<void> {
  await call.catch((error) => {
    if (!isConflict(error)) throw error;
  });
}

async function ignoreNotFound(call: Promise<unknown>): Promise<void> {
  await call.catch((error) => {
    if (!answered(error, 404)) throw error;
  });
}

/** What the API server said, for a log line or a run's message: its Status message when it sent one. */
export function apiMessage(error: unknown): string {
  if (error instanceof ApiException) {
    let body: unknown = error.body;
    if (typeof body === 'string') {
      try {
        body = JSON.parse(body);
      } catch {
        // not a Status: keep the text
      }
    }
    const message = (body as { message?: unknown } | undefined)?.message;
    return `HTTP ${error.code}: ${typeof message === 'string' ? message : String(error.body ?? error.message)}`;
  }
  return (error as Error).message;
}
