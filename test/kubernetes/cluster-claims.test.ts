/**
 * A run claimed again for the same execution (its lease lapsed before its agent started, so the takeback queued it
 * again; this happened under load in CI) creates the execution's objects a second time. The names are the
 * execution's, so the API server answers 409: the Secrets are written again at their current version and the Job
 * the first claim created is adopted; a Job already being deleted is refused in words that say so.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { KubernetesSettings } from '../../src/config-kubernetes.js';
import { Cluster } from '../../src/execution/kubernetes/cluster.js';
import { type ExecutionJobRequest, executionObjects } from '../../src/execution/kubernetes/job-spec.js';
import { testEngines } from '../support/container-engines.js';
import { type KubernetesDouble, startKubernetesDouble } from '../support/kubernetes/double.js';
import { resourceTypeOfKind } from '../support/kubernetes/resources.js';

const NAMESPACE = 'hangar-runs';
const INSTANCE = 'claims';
const podman = testEngines().engines.find((engine) => engine.name === 'podman');
if (!podman && process.env.CI === 'true')
  throw new Error('CI=true, but HANGAR_TEST_PODMAN_HOST is not set: the double runs pods with Podman');
const skip = podman ? false : 'no Podman: set HANGAR_TEST_PODMAN_HOST (scripts/container-engines.sh prepares it)';

const settings: KubernetesSettings = {
  kubeconfig: undefined,
  namespace: NAMESPACE,
  runtimeImage: 'localhost/hangar-test/runtime:never-started',
  instance: INSTANCE,
  serverUrl: 'http://hangar.hangar.svc:8080',
  runtimeClassName: undefined,
  nodeSelector: {},
  tolerations: [],
  podTemplate: undefined,
  unschedulableSeconds: 300,
  failedJobTtlSeconds: 3600,
  apiSelector: { 'app.kubernetes.io/name': 'hangar' },
  apiCidr: undefined,
};

function request(runId: string, overrides: Partial<ExecutionJobRequest> = {}): ExecutionJobRequest {
  return {
    settings,
    runId,
    executionId: 1,
    image: 'localhost/hangar-test/task:never-started',
    defaults: { memoryBytes: 256 * 1024 ** 2, cpus: 1, pids: 256 },
    maximums: { memoryBytes: 1024 ** 3, cpus: 2, pids: 1024 },
    request: undefined,
    deadlineSeconds: 600,
    serverUrl: 'http://hangar.hangar.svc:8080',
    credential: `hgx_${runId}.1.signature`,
    network: false,
    secretEnv: { ANTHROPIC_API_KEY: 'sk-first' },
    owner: `kubernetes:${INSTANCE}`,
    ...overrides,
  };
}

describe('an execution claimed again creates its objects again', { skip }, () => {
  let double: KubernetesDouble;
  let cluster: Cluster;
  let release: () => void;

  before(async () => {
    double = await startKubernetesDouble({ podmanHost: podman!.dockerHost });
    // No pod is placed: nothing runs in Podman, the objects are all this is about.
    release = double.faults.makeUnschedulable().release;
    const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-cluster-claims-'));
    cluster = new Cluster(NAMESPACE, INSTANCE, double.writeKubeconfig(directory));
  });
  after(async () => {
    release?.();
    await double?.stop();
  });

  test('the second create adopts the Job and writes the Secrets again, owned by that Job', async () => {
    const first = await cluster.create(executionObjects(request('run-again', { registryCredentials: 'robot:first' })));
    const again = executionObjects(
      request('run-again', { registryCredentials: 'robot:second', secretEnv: { ANTHROPIC_API_KEY: 'sk-second' } }),
    );
    const second = await cluster.create(again);
    assert.equal(second.metadata!.uid, first.metadata!.uid, 'the same Job');
    const jobs = double.store.list(resourceTypeOfKind('Job'), NAMESPACE).items;
    assert.equal(jobs.length, 1);
    for (const secret of [again.secret, again.pullSecret!]) {
      const stored = await cluster.core.readNamespacedSecret({ name: secret.metadata!.name!, namespace: NAMESPACE });
      assert.deepEqual(
        stored.metadata?.ownerReferences?.map((owner) => owner.uid),
        [first.metadata!.uid],
        `${secret.metadata!.name} is owned by the Job`,
      );
      assert.deepEqual(
        Object.keys(stored.data ?? {}).sort(),
        Object.keys({ ...secret.data, ...secret.stringData }).sort(),
      );
    }
    const env = await cluster.core.readNamespacedSecret({ name: again.secret.metadata!.name!, namespace: NAMESPACE });
    assert.equal(Buffer.from(env.data!.ANTHROPIC_API_KEY!, 'base64').toString(), 'sk-second', 'the new content');
  });

  test('a Job of the execution still being deleted is refused, naming it', async () => {
    const objects = executionObjects(request('run-deleting'));
    await cluster.create(objects);
    const name = objects.job.metadata!.name!;
    // As a foreground deletion leaves it while its pod goes: marked, held by the finalizer.
    double.store.update(resourceTypeOfKind('Job'), NAMESPACE, name, (job) => {
      job.metadata.deletionTimestamp = new Date().toISOString();
      job.metadata.finalizers = ['foregroundDeletion'];
    });
    await assert.rejects(cluster.create(objects), new RegExp(`The Job ${name} .* still being deleted`));
  });
});
