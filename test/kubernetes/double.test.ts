/**
 * The Kubernetes API double, driven by the official client (@kubernetes/client-node) as Hangar's backend drives it:
 * a Job whose pod runs for real in Podman (an init container's copy into an emptyDir, then the task container),
 * watched to completion, its log read, deleted with foreground propagation; validation against the schemas; RBAC
 * and SelfSubjectAccessReview; namespaces.
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

/** The Status body of a refused call, whatever form the client handed it over in. */
export function statusOf(error: unknown): {
  code: number;
  reason: string;
  message: string;
  details?: { causes?: Array<{ field?: string; reason: string }> };
} {
  assert.ok(error instanceof k8s.ApiException, `not an ApiException: ${error}`);
  const body = typeof error.body === 'string' ? JSON.parse(error.body) : error.body;
  return body;
}

const accepted = (): never => assert.fail('the call was accepted');

function job(name: string, spec: Partial<k8s.V1PodSpec>, extra: Partial<k8s.V1JobSpec> = {}): k8s.V1Job {
  return {
    metadata: { name, labels: { 'dev.hangar.test': 'double' } },
    spec: {
      backoffLimit: 0,
      ...extra,
      template: { spec: { restartPolicy: 'Never', containers: [], ...spec } },
    },
  };
}

describe('the Kubernetes API double', { skip }, () => {
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

  test('a Job runs its init container, then its task container, in Podman; its log is read; foreground deletion takes the pod, then the Job', async () => {
    const secret = await core.createNamespacedSecret({
      namespace: NAMESPACE,
      body: { metadata: { name: 'run-credential' }, stringData: { token: 'execution-token-1' } },
    });
    const created = await batch.createNamespacedJob({
      namespace: NAMESPACE,
      body: job('copy-then-run', {
        volumes: [{ name: 'runtime', emptyDir: {} }],
        initContainers: [
          {
            name: 'runtime',
            image: BASE_IMAGE,
            command: ['sh', '-c', 'echo copied-runtime > /runtime/marker'],
            volumeMounts: [{ name: 'runtime', mountPath: '/runtime' }],
          },
        ],
        containers: [
          {
            name: 'task',
            image: BASE_IMAGE,
            command: ['sh', '-c'],
            args: [
              'cat /runtime/marker; echo "token=$TOKEN pod=$POD_NAME user=$(id -u)"; touch /cannot-write 2>/dev/null || echo read-only-root',
            ],
            env: [
              { name: 'TOKEN', valueFrom: { secretKeyRef: { name: 'run-credential', key: 'token' } } },
              { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
            ],
            volumeMounts: [{ name: 'runtime', mountPath: '/runtime', readOnly: true }],
            resources: { limits: { memory: '256Mi', cpu: '500m' }, requests: { memory: '64Mi', cpu: '100m' } },
            securityContext: {
              runAsNonRoot: true,
              runAsUser: 65534,
              runAsGroup: 65534,
              allowPrivilegeEscalation: false,
              readOnlyRootFilesystem: true,
              capabilities: { drop: ['ALL'] },
              seccompProfile: { type: 'RuntimeDefault' },
            },
          },
        ],
      }),
    });
    // The secret is the Job's, so it goes with it.
    await core.patchNamespacedSecret(
      {
        name: secret.metadata!.name!,
        namespace: NAMESPACE,
        body: {
          metadata: {
            ownerReferences: [
              {
                apiVersion: 'batch/v1',
                kind: 'Job',
                name: 'copy-then-run',
                uid: created.metadata!.uid!,
                controller: false,
              },
            ],
          },
        },
      },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
    assert.equal(created.spec?.template.metadata?.labels?.['job-name'], 'copy-then-run');
    assert.equal(created.spec?.selector?.matchLabels?.['batch.kubernetes.io/controller-uid'], created.metadata?.uid);

    const completed = await watchUntil<k8s.V1Job>(
      config,
      `/apis/batch/v1/namespaces/${NAMESPACE}/jobs`,
      { labelSelector: 'dev.hangar.test=double', resourceVersion: created.metadata!.resourceVersion },
      (event) =>
        event.object.metadata?.name === 'copy-then-run' &&
        Boolean(event.object.status?.conditions?.some((c) => c.type === 'Complete' || c.type === 'Failed')),
    );
    assert.deepEqual(
      completed.object.status?.conditions?.map((condition) => [condition.type, condition.status, condition.reason]),
      [
        ['SuccessCriteriaMet', 'True', 'CompletionsReached'],
        ['Complete', 'True', 'CompletionsReached'],
      ],
    );
    assert.equal(completed.object.status?.succeeded, 1);

    const pods = await core.listNamespacedPod({ namespace: NAMESPACE, labelSelector: 'job-name=copy-then-run' });
    assert.equal(pods.items.length, 1);
    const pod = pods.items[0]!;
    assert.equal(pod.status?.phase, 'Succeeded');
    assert.equal(pod.status?.initContainerStatuses?.[0]?.state?.terminated?.reason, 'Completed');
    assert.equal(pod.status?.containerStatuses?.[0]?.state?.terminated?.exitCode, 0);
    assert.equal(pod.metadata?.ownerReferences?.[0]?.uid, created.metadata?.uid);
    assert.equal(pod.status?.qosClass, 'Burstable');

    const log = await core.readNamespacedPodLog({ name: pod.metadata!.name!, namespace: NAMESPACE, container: 'task' });
    assert.equal(log, `copied-runtime\ntoken=execution-token-1 pod=${pod.metadata!.name} user=65534\nread-only-root\n`);

    const reasons = (
      await core.listNamespacedEvent({ namespace: NAMESPACE, fieldSelector: `involvedObject.uid=${pod.metadata!.uid}` })
    ).items.map((event) => event.reason);
    for (const reason of ['Scheduled', 'Pulled', 'Created', 'Started'])
      assert.ok(reasons.includes(reason), `${reason} in ${reasons}`);

    const deletions: string[] = [];
    const jobGone = watchUntil(
      config,
      `/api/v1/namespaces/${NAMESPACE}/pods`,
      { resourceVersion: completed.object.metadata!.resourceVersion },
      (event) => {
        if (event.type === 'DELETED') deletions.push(`pod ${event.object.metadata?.name}`);
        return event.type === 'DELETED';
      },
    ).then(() =>
      watchUntil(
        config,
        `/apis/batch/v1/namespaces/${NAMESPACE}/jobs`,
        { resourceVersion: completed.object.metadata!.resourceVersion },
        (event) => {
          if (event.type === 'DELETED') deletions.push(`job ${event.object.metadata?.name}`);
          return event.type === 'DELETED';
        },
      ),
    );
    const deleting = await batch.deleteNamespacedJob({
      name: 'copy-then-run',
      namespace: NAMESPACE,
      propagationPolicy: 'Foreground',
    });
    assert.equal(deleting.kind, 'Job');
    await jobGone;
    assert.deepEqual(deletions, [`pod ${pod.metadata!.name}`, 'job copy-then-run']);
    await assert.rejects(
      core.readNamespacedSecret({ name: 'run-credential', namespace: NAMESPACE }),
      (error) => statusOf(error).code === 404,
    );
    const containers = await podman!.client.call<unknown[]>(
      'GET',
      `/containers/json?all=true&filters=${encodeURIComponent(JSON.stringify({ label: [`io.kubernetes.pod.uid=${pod.metadata!.uid}`] }))}`,
    );
    assert.deepEqual(containers.body, [], "the pod's containers are removed with it");
  });

  test("an object the schemas or the API server's rules refuse is answered 422 Invalid; an unknown field 400; a dry run stores nothing", async () => {
    const missingImage = await batch
      .createNamespacedJob({
        namespace: NAMESPACE,
        body: job('no-image', { containers: [{ name: 'task' } as k8s.V1Container] }),
      })
      .then(accepted, statusOf);
    assert.equal(missingImage.code, 422);
    assert.equal(missingImage.reason, 'Invalid');
    assert.equal(
      missingImage.message,
      'Job.batch "no-image" is invalid: spec.template.spec.containers[0].image: Required value',
    );

    const badQuantity = await batch
      .createNamespacedJob({
        namespace: NAMESPACE,
        body: job('bad-limit', {
          containers: [{ name: 'task', image: BASE_IMAGE, resources: { limits: { memory: 'lots' } } }],
        }),
      })
      .then(accepted, statusOf);
    assert.equal(badQuantity.code, 422);
    assert.deepEqual(
      badQuantity.details?.causes?.map((cause) => cause.field),
      ['spec.template.spec.containers[0].resources.limits.memory'],
    );

    const alwaysRestart = await batch
      .createNamespacedJob({
        namespace: NAMESPACE,
        body: job('restarts', { restartPolicy: 'Always', containers: [{ name: 'task', image: BASE_IMAGE }] }),
      })
      .then(accepted, statusOf);
    assert.equal(alwaysRestart.code, 422);
    assert.match(alwaysRestart.message, /spec\.template\.spec\.restartPolicy: Unsupported value: "Always"/);

    const typo = job('typo', { containers: [{ name: 'task', image: BASE_IMAGE }] }) as unknown as {
      spec: Record<string, unknown>;
    };
    typo.spec.activeDeadlineSecond = 30;
    const unknown = await fetchApi('POST', `/apis/batch/v1/namespaces/${NAMESPACE}/jobs`, {
      apiVersion: 'batch/v1',
      kind: 'Job',
      ...typo,
    });
    assert.equal(unknown.status, 400);
    assert.equal(unknown.body.message, 'strict decoding error: unknown field "spec.activeDeadlineSecond"');

    const badPolicy = await config
      .makeApiClient(k8s.NetworkingV1Api)
      .createNamespacedNetworkPolicy({
        namespace: NAMESPACE,
        body: {
          metadata: { name: 'bad' },
          spec: { podSelector: {}, egress: [{ to: [{ ipBlock: { cidr: 'not-a-cidr' } }] }] },
        },
      })
      .then(accepted, statusOf);
    assert.equal(badPolicy.code, 422);

    const dry = await batch.createNamespacedJob({
      namespace: NAMESPACE,
      dryRun: 'All',
      body: job('dry', { containers: [{ name: 'task', image: BASE_IMAGE }] }),
    });
    assert.equal(dry.metadata?.name, 'dry');
    await assert.rejects(
      batch.readNamespacedJob({ name: 'dry', namespace: NAMESPACE }),
      (error) => statusOf(error).code === 404,
    );
    assert.deepEqual(
      double.refused.map((refusal) => refusal.kind),
      ['Job', 'Job', 'Job', 'Job', 'NetworkPolicy'],
    );
  });

  test("RBAC: a denied verb is 403 Forbidden in RBAC's words; SelfSubjectAccessReview answers per verb and resource", async () => {
    const authorization = config.makeApiClient(k8s.AuthorizationV1Api);
    const review = (verb: string, resource: string, group = '') =>
      authorization
        .createSelfSubjectAccessReview({
          body: { spec: { resourceAttributes: { namespace: NAMESPACE, verb, resource, group } } },
        })
        .then((answer) => answer.status?.allowed);
    assert.equal(await review('create', 'jobs', 'batch'), true);
    const allow = double.authorizer.deny({ verb: 'create', resource: 'jobs', group: 'batch' });
    try {
      assert.equal(await review('create', 'jobs', 'batch'), false);
      assert.equal(await review('create', 'secrets'), true);
      const refused = await batch
        .createNamespacedJob({
          namespace: NAMESPACE,
          body: job('refused', { containers: [{ name: 'task', image: BASE_IMAGE }] }),
        })
        .then(accepted, statusOf);
      assert.equal(refused.code, 403);
      assert.equal(refused.reason, 'Forbidden');
      assert.equal(
        refused.message,
        `jobs.batch is forbidden: User "system:serviceaccount:hangar:hangar" cannot create resource "jobs" in API group "batch" in the namespace "${NAMESPACE}"`,
      );
    } finally {
      allow();
    }
    assert.equal(await review('create', 'jobs', 'batch'), true);
  });

  test('namespaces are read; a missing one is 404; a wrong token is 401', async () => {
    assert.equal((await core.readNamespace({ name: NAMESPACE })).status?.phase, 'Active');
    assert.equal(await core.readNamespace({ name: 'elsewhere' }).catch((error) => statusOf(error).code), 404);
    const wrong = new k8s.KubeConfig();
    wrong.loadFromOptions({
      clusters: config.clusters,
      contexts: config.contexts,
      currentContext: config.currentContext,
      users: [{ name: 'double', token: 'not-the-token' }],
    });
    await assert.rejects(
      wrong.makeApiClient(k8s.CoreV1Api).listNamespacedPod({ namespace: NAMESPACE }),
      (error) => (error as k8s.ApiException<unknown>).code === 401,
    );
  });

  /** A raw call, for what the typed client would not send (an unknown field). */
  async function fetchApi(
    method: string,
    path: string,
    body: unknown,
  ): Promise<{ status: number; body: { message: string } }> {
    const { Agent } = await import('undici');
    const response = await fetch(`${double.url}${path}`, {
      method,
      headers: { Authorization: `Bearer ${double.token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
      // Node's fetch takes undici's dispatcher (the double's own certificate authority).
      dispatcher: new Agent({ connect: { ca: double.certificate } }),
    });
    return { status: response.status, body: (await response.json()) as { message: string } };
  }
});
