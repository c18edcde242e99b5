/**
 * The faults the Kubernetes API double scripts, each seen through the official client as a cluster shows it:
 * Unschedulable, ErrImagePull/ImagePullBackOff, an OOM kill (a real one, under a memory limit), a watch ended with
 * 410 Gone, a node lost under a running Job, activeDeadlineSeconds, ttlSecondsAfterFinished.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { BASE_IMAGE, testEngines } from '../support/container-engines.js';
import { watchUntil } from '../support/kubernetes/client-watch.js';
import { type KubernetesDouble, startKubernetesDouble } from '../support/kubernetes/double.js';

const NAMESPACE = 'hangar-runs';
const podman = testEngines().engines.find((engine) => engine.name === 'podman');
if (!podman && process.env.CI === 'true')
  throw new Error('CI=true, but HANGAR_TEST_PODMAN_HOST is not set: the double runs pods with Podman');
const skip = podman ? false : 'no Podman: set HANGAR_TEST_PODMAN_HOST (scripts/container-engines.sh prepares it)';

function job(name: string, container: Partial<k8s.V1Container>, extra: Partial<k8s.V1JobSpec> = {}): k8s.V1Job {
  return {
    metadata: { name },
    spec: {
      backoffLimit: 0,
      ...extra,
      template: {
        spec: { restartPolicy: 'Never', containers: [{ name: 'task', image: BASE_IMAGE, ...container }] },
      },
    },
  };
}

type Condition = { type: string; reason?: string; message?: string };

/** Runs until stopped, and stops at SIGTERM (a bare `sleep` as PID 1 ignores it and waits out the grace period). */
const UNTIL_STOPPED = ['sh', '-c', 'trap "exit 143" TERM; sleep infinity & wait'];

describe('the Kubernetes API double: scripted faults', { skip }, () => {
  let double: KubernetesDouble;
  let config: k8s.KubeConfig;
  let batch: k8s.BatchV1Api;
  let core: k8s.CoreV1Api;

  before(async () => {
    double = await startKubernetesDouble({ podmanHost: podman!.dockerHost });
    config = double.kubeConfig();
    batch = config.makeApiClient(k8s.BatchV1Api);
    core = config.makeApiClient(k8s.CoreV1Api);
  });
  after(() => double?.stop());

  /** The first event about `name`'s pods (job-name label) whose pod satisfies `until`, from `resourceVersion`. */
  function podOf(name: string, resourceVersion: string | undefined, until: (pod: k8s.V1Pod, type: string) => boolean) {
    return watchUntil<k8s.V1Pod>(
      config,
      `/api/v1/namespaces/${NAMESPACE}/pods`,
      { labelSelector: `job-name=${name}`, resourceVersion },
      (event) => until(event.object, event.type),
    ).then((event) => event.object);
  }

  function jobEnd(name: string, resourceVersion: string | undefined) {
    return watchUntil<k8s.V1Job>(
      config,
      `/apis/batch/v1/namespaces/${NAMESPACE}/jobs`,
      { fieldSelector: `metadata.name=${name}`, resourceVersion },
      (event) => Boolean(event.object.status?.conditions?.some((c) => c.type === 'Complete' || c.type === 'Failed')),
    ).then((event) => event.object.status?.conditions as Condition[]);
  }

  async function eventReasons(uid: string): Promise<string[]> {
    const events = await core.listNamespacedEvent({ namespace: NAMESPACE, fieldSelector: `involvedObject.uid=${uid}` });
    return events.items.map((event) => `${event.type} ${event.reason}`);
  }

  test("Unschedulable: the pod stays Pending with PodScheduled False and the scheduler's message, until released", async () => {
    const hold = double.faults.makeUnschedulable({
      message: "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector.",
    });
    const created = await batch.createNamespacedJob({
      namespace: NAMESPACE,
      body: job('unschedulable', { command: ['true'] }),
    });
    const pending = await podOf('unschedulable', created.metadata!.resourceVersion, (pod) =>
      Boolean(pod.status?.conditions?.some((c) => c.type === 'PodScheduled' && c.status === 'False')),
    );
    const scheduled = pending.status?.conditions?.find((c) => c.type === 'PodScheduled');
    assert.equal(pending.status?.phase, 'Pending');
    assert.equal(scheduled?.reason, 'Unschedulable');
    assert.equal(scheduled?.message, "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector.");
    assert.deepEqual(await eventReasons(pending.metadata!.uid!), ['Warning FailedScheduling']);
    hold.release();
    assert.deepEqual(
      (await jobEnd('unschedulable', pending.metadata!.resourceVersion)).map((c) => c.type),
      ['SuccessCriteriaMet', 'Complete'],
    );
  });

  test("an image no registry has: ErrImagePull, then ImagePullBackOff, with kubelet's events; the log is refused", async () => {
    const created = await batch.createNamespacedJob({
      namespace: NAMESPACE,
      body: job('no-such-image', { image: 'localhost/hangar-test/absent:1' }),
    });
    const backingOff = await podOf(
      'no-such-image',
      created.metadata!.resourceVersion,
      (pod) => pod.status?.containerStatuses?.[0]?.state?.waiting?.reason === 'ImagePullBackOff',
    );
    assert.equal(backingOff.status?.phase, 'Pending');
    assert.equal(
      backingOff.status?.containerStatuses?.[0]?.state?.waiting?.message,
      'Back-off pulling image "localhost/hangar-test/absent:1"',
    );
    const reasons = await eventReasons(backingOff.metadata!.uid!);
    for (const reason of ['Normal Pulling', 'Warning Failed', 'Normal BackOff'])
      assert.ok(reasons.includes(reason), `${reason} in ${reasons}`);
    const messages = (
      await core.listNamespacedEvent({
        namespace: NAMESPACE,
        fieldSelector: `involvedObject.uid=${backingOff.metadata!.uid},reason=Failed`,
      })
    ).items.map((event) => event.message);
    assert.ok(messages.includes('Error: ErrImagePull'), String(messages));
    assert.ok(messages.includes('Error: ImagePullBackOff'), String(messages));
    const log = await core.readNamespacedPodLog({ name: backingOff.metadata!.name!, namespace: NAMESPACE }).then(
      () => assert.fail('the log of a container that never started was served'),
      (error: k8s.ApiException<string>) => error,
    );
    assert.equal(log.code, 400);
    assert.match(
      String(log.body),
      /container \\"task\\" in pod \\"no-such-image-\w+\\" is waiting to start: trying and failing to pull image/,
    );
    await batch.deleteNamespacedJob({ name: 'no-such-image', namespace: NAMESPACE, propagationPolicy: 'Background' });
  });

  test('a container past its memory limit is OOMKilled (exit 137) and the Job fails with BackoffLimitExceeded', async () => {
    const created = await batch.createNamespacedJob({
      namespace: NAMESPACE,
      // tail holds its whole input while it looks for a line: 512 MiB with no newline outgrows 32 MiB.
      body: job('memory-hog', {
        command: ['sh', '-c', 'head -c 512m /dev/zero | tail'],
        resources: { limits: { memory: '32Mi' } },
      }),
    });
    const conditions = await jobEnd('memory-hog', created.metadata!.resourceVersion);
    assert.deepEqual(
      conditions.map((c) => [c.type, c.reason]),
      [
        ['FailureTarget', 'BackoffLimitExceeded'],
        ['Failed', 'BackoffLimitExceeded'],
      ],
    );
    const [pod] = (await core.listNamespacedPod({ namespace: NAMESPACE, labelSelector: 'job-name=memory-hog' })).items;
    assert.equal(pod?.status?.phase, 'Failed');
    assert.deepEqual(
      [
        pod?.status?.containerStatuses?.[0]?.state?.terminated?.reason,
        pod?.status?.containerStatuses?.[0]?.state?.terminated?.exitCode,
      ],
      ['OOMKilled', 137],
    );
  });

  test('a watch is ended with an ERROR event of 410 Expired; watching again from the old resourceVersion gets 410 too', async () => {
    const list = await batch.listNamespacedJob({ namespace: NAMESPACE });
    const oldVersion = list.metadata!.resourceVersion!;
    const opened = double.nextWatch();
    const ended = watchUntil(
      config,
      `/apis/batch/v1/namespaces/${NAMESPACE}/jobs`,
      { resourceVersion: oldVersion },
      (event) => event.type === 'ERROR',
    );
    await opened;
    assert.ok(double.expireWatches() >= 1);
    const error = await ended;
    assert.deepEqual([error.object.code, error.object.reason], [410, 'Expired']);
    const again = await watchUntil(
      config,
      `/apis/batch/v1/namespaces/${NAMESPACE}/jobs`,
      { resourceVersion: oldVersion },
      (event) => event.type === 'ERROR',
    );
    assert.equal(again.object.code, 410);
    assert.match(String(again.object.message), /too old resource version/);
  });

  test('a node lost under a running Job: the pod is marked (DisruptionTarget), an Event says so, the pod goes and the Job fails', async () => {
    const created = await batch.createNamespacedJob({
      namespace: NAMESPACE,
      body: job('node-lost', { command: UNTIL_STOPPED }),
    });
    const running = await podOf(
      'node-lost',
      created.metadata!.resourceVersion,
      (pod) => pod.status?.phase === 'Running',
    );
    const deleted = podOf('node-lost', running.metadata!.resourceVersion, (_pod, type) => type === 'DELETED');
    await double.loseNode(NAMESPACE, running.metadata!.name!);
    const gone = await deleted;
    const disruption = gone.status?.conditions?.find((c) => c.type === 'DisruptionTarget');
    assert.deepEqual([disruption?.status, disruption?.reason], ['True', 'DeletionByTaintManager']);
    const events = await core.listNamespacedEvent({
      namespace: NAMESPACE,
      fieldSelector: `involvedObject.uid=${running.metadata!.uid},reason=TaintManagerEviction`,
    });
    assert.equal(events.items[0]?.message, `Marking for deletion Pod ${NAMESPACE}/${running.metadata!.name}`);
    const conditions = await jobEnd('node-lost', created.metadata!.resourceVersion);
    assert.equal(conditions.find((c) => c.type === 'Failed')?.reason, 'BackoffLimitExceeded');
  });

  test('activeDeadlineSeconds: the pod is deleted and the Job fails with DeadlineExceeded', async () => {
    const created = await batch.createNamespacedJob({
      namespace: NAMESPACE,
      body: job('deadline', { command: UNTIL_STOPPED }, { activeDeadlineSeconds: 1 }),
    });
    const conditions = await jobEnd('deadline', created.metadata!.resourceVersion);
    assert.deepEqual(
      conditions.map((c) => [c.type, c.reason, c.message]),
      [
        ['FailureTarget', 'DeadlineExceeded', 'Job was active longer than specified deadline'],
        ['Failed', 'DeadlineExceeded', 'Job was active longer than specified deadline'],
      ],
    );
    const deleted = await podOf('deadline', created.metadata!.resourceVersion, (_pod, type) => type === 'DELETED');
    assert.equal(deleted.status?.containerStatuses?.[0]?.state?.terminated?.exitCode, 143);
    assert.ok((await eventReasons(created.metadata!.uid!)).includes('Warning DeadlineExceeded'));
  });

  test('ttlSecondsAfterFinished: a finished Job is deleted with its pods', async () => {
    const created = await batch.createNamespacedJob({
      namespace: NAMESPACE,
      body: job('short-lived', { command: ['true'] }, { ttlSecondsAfterFinished: 0 }),
    });
    const removed = await watchUntil(
      config,
      `/apis/batch/v1/namespaces/${NAMESPACE}/jobs`,
      { fieldSelector: 'metadata.name=short-lived', resourceVersion: created.metadata!.resourceVersion },
      (event) => event.type === 'DELETED',
    );
    assert.equal(removed.object.metadata?.uid, created.metadata?.uid);
    assert.deepEqual(
      (await core.listNamespacedPod({ namespace: NAMESPACE, labelSelector: 'job-name=short-lived' })).items,
      [],
    );
  });
});
