/**
 * The Kubernetes backend's pure parts, without a cluster: the objects of one execution as Hangar sends them
 * (job-spec.ts, each checked against the OpenAPI schemas and the API server's rules), what a Job and its pod say
 * (pod-status.ts) and what that does to the run (settle.ts).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { V1Job, V1Pod } from '@kubernetes/client-node';
import type { KubernetesSettings } from '../../src/config-kubernetes.js';
import type { EnvironmentConfig } from '../../src/environments/index.js';
import { ExecutionCredentials } from '../../src/execution/kubernetes/credential.js';
import { type ExecutionJobRequest, executionObjects, POD_USER } from '../../src/execution/kubernetes/job-spec.js';
import { type PlannerOptions, planExecution } from '../../src/execution/kubernetes/planner.js';
import { judge } from '../../src/execution/kubernetes/pod-status.js';
import { settlement } from '../../src/execution/kubernetes/settle.js';
import type { ClaimedRun } from '../../src/runs/index.js';
import { unknownFields } from '../support/kubernetes/schema.js';
import type { KubeObject } from '../support/kubernetes/store.js';
import { validateObject } from '../support/kubernetes/validation.js';

const settings: KubernetesSettings = {
  kubeconfig: undefined,
  namespace: 'hangar-runs',
  runtimeImage: 'registry.example/hangar:1.2.3',
  instance: 'prod',
  serverUrl: 'http://hangar.hangar.svc:8080',
  runtimeClassName: 'gvisor',
  nodeSelector: { pool: 'runs' },
  tolerations: [{ key: 'runs', operator: 'Exists', effect: 'NoSchedule' }],
  podTemplate: {
    metadata: { labels: { team: 'infra' }, annotations: { note: 'x' } },
    spec: {
      priorityClassName: 'runs',
      automountServiceAccountToken: true,
      containers: [
        { name: 'task', env: [{ name: 'EXTRA', value: '1' }] },
        { name: 'sidecar', image: 'busybox' },
      ],
    },
  },
  unschedulableSeconds: 300,
  failedJobTtlSeconds: 3600,
  apiSelector: { 'app.kubernetes.io/name': 'hangar' },
  apiCidr: undefined,
};

function request(overrides: Partial<ExecutionJobRequest> = {}): ExecutionJobRequest {
  return {
    settings,
    runId: 'Run_ID.with+odd/characters',
    executionId: 2,
    image: 'registry.example/team/image:tag',
    defaults: { memoryBytes: 2 * 1024 ** 3, cpus: 2, pids: 512 },
    maximums: { memoryBytes: 4 * 1024 ** 3, cpus: 4, pids: 4096 },
    request: { memory: '8g', cpus: 0.5 },
    deadlineSeconds: 4200,
    serverUrl: 'http://hangar.hangar.svc:8080',
    credential: 'hgx_run.2.signature',
    network: false,
    secretEnv: { ANTHROPIC_API_KEY: 'sk-test' },
    operatorFile: 'harnesses: {}\n',
    owner: 'kubernetes:prod',
    ...overrides,
  };
}

describe('job-spec: the objects of one execution', () => {
  test('every object passes the OpenAPI schemas and the API server rules, with no unknown field', () => {
    const objects = executionObjects(request({ registryCredentials: 'robot:secret', network: true }));
    const all = [objects.job, objects.secret, objects.pullSecret!, objects.networkPolicy];
    for (const object of all) {
      const name = `${object.kind} ${object.metadata?.name}`;
      assert.deepEqual(validateObject(object as KubeObject), [], `${name} is valid`);
      assert.deepEqual(unknownFields(object), [], `${name} has no unknown field`);
    }
  });

  test('the Job: one try, never restarted, the deadline, a time to live, and labels to find it again', () => {
    const { job } = executionObjects(request());
    assert.match(job.metadata!.name!, /^hangar-run-[a-z0-9-]+-2$/);
    assert.ok(job.metadata!.name!.length <= 63);
    assert.equal(job.spec!.backoffLimit, 0);
    assert.equal(job.spec!.activeDeadlineSeconds, 4200);
    assert.equal(job.spec!.ttlSecondsAfterFinished, 3600);
    assert.equal(job.spec!.template.spec!.restartPolicy, 'Never');
    assert.equal(job.metadata!.labels!['hangar.dev/server'], 'prod');
    assert.equal(job.metadata!.labels!['hangar.dev/execution'], '2');
    assert.match(job.metadata!.labels!['hangar.dev/run']!, /^h-[0-9a-f]{40}$/, 'a run ID no label takes is a digest');
    assert.equal(job.metadata!.annotations!['hangar.dev/lease-owner'], 'kubernetes:prod');
  });

  test('the pod: no token, non-root, no capabilities, RuntimeDefault seccomp, whatever the operator template says', () => {
    const spec = executionObjects(request()).job.spec!.template.spec!;
    assert.equal(spec.automountServiceAccountToken, false, "the template's true is overridden");
    assert.equal(spec.securityContext!.runAsNonRoot, true);
    assert.equal(spec.securityContext!.runAsUser, POD_USER);
    assert.equal(spec.securityContext!.seccompProfile!.type, 'RuntimeDefault');
    for (const container of [...spec.initContainers!, ...spec.containers]) {
      assert.equal(container.securityContext!.allowPrivilegeEscalation, false, container.name);
      assert.deepEqual(container.securityContext!.capabilities!.drop, ['ALL'], container.name);
      assert.equal(container.securityContext!.runAsNonRoot, true, container.name);
    }
    assert.deepEqual(
      spec.containers.map((container) => container.name),
      ['task'],
      "the template's sidecar is left out: it would keep the Job from finishing",
    );
    assert.equal(spec.runtimeClassName, 'gvisor');
    assert.equal(spec.priorityClassName, 'runs', "the template's other fields are kept");
    assert.deepEqual(spec.nodeSelector, { pool: 'runs' });
    assert.ok(spec.containers[0]!.env!.some((variable) => variable.name === 'EXTRA'));
  });

  test('limits within the maxima, requests equal to limits; the init container copies from the runtime image', () => {
    const spec = executionObjects(request()).job.spec!.template.spec!;
    const task = spec.containers[0]!;
    assert.equal(task.image, 'registry.example/team/image:tag');
    assert.deepEqual(
      task.resources!.limits,
      { memory: String(4 * 1024 ** 3), cpu: '500m' },
      '8g lowered to the 4g maximum',
    );
    assert.deepEqual(task.resources!.requests, task.resources!.limits);
    const init = spec.initContainers![0]!;
    assert.equal(init.image, 'registry.example/hangar:1.2.3');
    assert.equal(init.terminationMessagePolicy, 'FallbackToLogsOnError');
    assert.match(init.command!.join(' '), /pod-runtime\.txt/, 'only the packages the pod worker loads');
    assert.deepEqual(task.command!.slice(1), ['/opt/hangar/app/dist/main.js', 'worker', '--execution']);
  });

  test('the credential and the keys reach the task through the Secret, never as plain values', () => {
    const { job, secret } = executionObjects(request());
    assert.equal(secret.stringData!.HANGAR_EXECUTION_CREDENTIAL, 'hgx_run.2.signature');
    const env = job.spec!.template.spec!.containers[0]!.env!;
    for (const name of ['HANGAR_EXECUTION_CREDENTIAL', 'ANTHROPIC_API_KEY']) {
      const variable = env.find((entry) => entry.name === name);
      assert.equal(variable?.value, undefined, name);
      assert.equal(variable?.valueFrom?.secretKeyRef?.name, secret.metadata!.name, name);
    }
    assert.ok(!JSON.stringify(job).includes('sk-test'));
    assert.ok(!JSON.stringify(job).includes('hgx_'));
  });

  test('the NetworkPolicy: nothing in; out the API and DNS, the internet only with network, never private ranges', () => {
    const offline = executionObjects(request()).networkPolicy.spec!;
    assert.deepEqual(offline.ingress, []);
    assert.equal(offline.egress!.length, 2, 'the API and DNS');
    assert.ok(!JSON.stringify(offline).includes('0.0.0.0/0'));
    const online = executionObjects(request({ network: true })).networkPolicy.spec!;
    const internet = online.egress![2]!.to!.map((peer) => peer.ipBlock!);
    assert.equal(internet[0]!.cidr, '0.0.0.0/0');
    for (const range of ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '169.254.0.0/16'])
      assert.ok(internet[0]!.except!.includes(range), range);
    assert.ok(internet[1]!.except!.includes('fe80::/10'));
  });

  test('an image pull Secret only for an environment with registry credentials, for the image registry', () => {
    assert.equal(executionObjects(request()).pullSecret, undefined);
    const { job, pullSecret } = executionObjects(request({ registryCredentials: 'robot:p:ss' }));
    const config = JSON.parse(pullSecret!.stringData!['.dockerconfigjson']!);
    assert.deepEqual(Object.keys(config.auths), ['registry.example']);
    assert.equal(config.auths['registry.example'].password, 'p:ss');
    assert.deepEqual(job.spec!.template.spec!.imagePullSecrets, [{ name: pullSecret!.metadata!.name }]);
  });
});

const failedJob = (reason: string): V1Job => ({
  status: { conditions: [{ type: 'Failed', status: 'True', reason, message: `${reason} message` }] },
});
const pod = (status: V1Pod['status'], metadata: V1Pod['metadata'] = {}): V1Pod => ({
  metadata,
  spec: { containers: [{ name: 'task', image: 'the/image' }] },
  status,
});
const seen = { job: true, pod: true };

describe('pod-status: what a Job and its pod say', () => {
  test('running, pending and a pod not seen yet are nothing to act on', () => {
    assert.deepEqual(judge(undefined, undefined, { job: false, pod: false }), { kind: 'running' });
    assert.deepEqual(judge({}, undefined, { job: true, pod: false }), { kind: 'running' });
    assert.deepEqual(judge({}, pod({ phase: 'Running' }), seen), { kind: 'running' });
  });

  test('unschedulable, with the scheduler message', () => {
    const verdict = judge(
      {},
      pod({
        phase: 'Pending',
        conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: '0/3 nodes' }],
      }),
      seen,
    );
    assert.deepEqual(verdict, { kind: 'unschedulable', message: '0/3 nodes' });
  });

  test('an image pull, of the task or of the runtime image, names the image and the reason', () => {
    for (const reason of ['ErrImagePull', 'ImagePullBackOff']) {
      const verdict = judge(
        {},
        pod({
          phase: 'Pending',
          initContainerStatuses: [
            {
              name: 'hangar-runtime',
              image: 'hangar:1',
              ready: false,
              restartCount: 0,
              imageID: '',
              state: { waiting: { reason, message: 'not found' } },
            },
          ],
        }),
        seen,
      );
      assert.deepEqual(verdict, { kind: 'image', image: 'hangar:1', reason, message: 'not found' });
    }
  });

  test('OOMKilled, in the state or the last state, before anything else the pod says', () => {
    const terminated = { exitCode: 137, reason: 'OOMKilled' };
    const verdict = judge(
      failedJob('BackoffLimitExceeded'),
      pod({
        phase: 'Failed',
        containerStatuses: [
          { name: 'task', image: 'x', imageID: '', ready: false, restartCount: 0, state: { terminated } },
        ],
      }),
      seen,
    );
    assert.deepEqual(verdict, { kind: 'oom', container: 'task' });
  });

  test('the deadline, even with the pod gone', () => {
    assert.equal(judge(failedJob('DeadlineExceeded'), undefined, seen).kind, 'deadline');
  });

  test('a pod lost: gone after it was seen, evicted, marked for deletion or a disruption target', () => {
    assert.equal(judge({}, undefined, seen).kind, 'lost');
    assert.equal(judge(undefined, undefined, seen).kind, 'lost', 'the Job deleted under the run');
    assert.equal(judge({}, pod({ phase: 'Failed', reason: 'Evicted', message: 'low on memory' }), seen).kind, 'lost');
    assert.equal(judge({}, pod({ phase: 'Running' }, { deletionTimestamp: new Date() }), seen).kind, 'lost');
    const verdict = judge(
      {},
      pod({ phase: 'Running', conditions: [{ type: 'DisruptionTarget', status: 'True', message: 'Taint manager' }] }),
      seen,
    );
    assert.deepEqual(verdict, { kind: 'lost', reason: 'Taint manager' });
  });

  test("exited: the task container's exit, or the runtime copy's failure with its message", () => {
    const exited = judge(
      {},
      pod({
        phase: 'Succeeded',
        containerStatuses: [
          {
            name: 'task',
            image: 'x',
            imageID: '',
            ready: false,
            restartCount: 0,
            state: { terminated: { exitCode: 0, reason: 'Completed' } },
          },
        ],
      }),
      seen,
    );
    assert.deepEqual(exited, { kind: 'exited', exitCode: 0, message: 'Completed' });
    const copy = judge(
      {},
      pod({
        phase: 'Failed',
        initContainerStatuses: [
          {
            name: 'hangar-runtime',
            image: 'x',
            imageID: '',
            ready: false,
            restartCount: 0,
            state: { terminated: { exitCode: 1, message: 'no node on its PATH' } },
          },
        ],
      }),
      seen,
    );
    assert.equal(copy.kind, 'exited');
    assert.match((copy as { message: string }).message, /runtime copy .* no node on its PATH/);
  });
});

describe('settle: a verdict in the run words', () => {
  const context = { job: 'hangar-run-x-1', image: 'the/image', memory: '512 MiB', agentStarted: false };
  const ended = (verdict: Parameters<typeof settlement>[0], agentStarted = false) => {
    const decided = settlement(verdict, { ...context, agentStarted });
    assert.equal(decided.kind, 'end');
    const end = decided as Extract<typeof decided, { kind: 'end' }>;
    const status = end.outcome.statusMessage as { message: string; error_code: string; retryable: boolean };
    return { ...end, status };
  };

  test('unschedulable: ERROR resource_unavailable, retryable, the scheduler message; the Job goes', () => {
    const decided = ended({ kind: 'unschedulable', message: '0/3 nodes' });
    assert.equal(decided.outcome.state, 'ERROR');
    assert.deepEqual([decided.status.error_code, decided.status.retryable], ['resource_unavailable', true]);
    assert.match(decided.status.message, /0\/3 nodes/);
    assert.equal(decided.event.type, 'kubernetes_pod_unschedulable');
    assert.equal(decided.deleteJob, true);
  });

  test('an image: FAILED environment_setup_failed naming it, never retried', () => {
    const decided = ended({ kind: 'image', image: 'the/image:1', reason: 'ImagePullBackOff', message: 'nope' });
    assert.equal(decided.outcome.state, 'FAILED');
    assert.equal(decided.status.error_code, 'environment_setup_failed');
    assert.equal(decided.status.retryable, false);
    assert.match(decided.status.message, /the\/image:1 .*ImagePullBackOff/);
  });

  test('OOMKilled: resource_limit_exceeded with the limit; the deadline: budget_exceeded, timed out', () => {
    const oom = ended({ kind: 'oom', container: 'task' });
    assert.equal(oom.status.error_code, 'resource_limit_exceeded');
    assert.match(oom.status.message, /512 MiB/);
    assert.equal(oom.deleteJob, false, 'a failed Job stays for a post-mortem');
    const deadline = ended({ kind: 'deadline', message: 'too long' });
    assert.equal(deadline.status.error_code, 'budget_exceeded');
    assert.deepEqual(deadline.outcome.eventPayload, { timed_out: true });
  });

  test('lost: the takeback rules decide; exited: FAILED before the agent started, ERROR retryable after', () => {
    assert.equal(settlement({ kind: 'lost', reason: 'node' }, context).kind, 'takeback');
    const before = ended({ kind: 'exited', exitCode: 127, message: 'Error' });
    assert.equal(before.outcome.state, 'FAILED');
    assert.equal(before.status.error_code, 'environment_setup_failed');
    assert.match(before.status.message, /glibc/);
    const after = ended({ kind: 'exited', exitCode: 1, message: 'Error' }, true);
    assert.equal(after.outcome.state, 'ERROR');
    assert.equal(after.status.retryable, true);
  });
});

describe("the planner takes the run's runner", () => {
  const environment = {
    docker_image: 'team/image:1',
    setup_commands: [],
    github_repos: [],
    limits: { memory: '1g', cpus: 1 },
  };
  const planner: PlannerOptions = {
    settings,
    environments: {
      setupFor: async () => environment as unknown as EnvironmentConfig,
      recordSetupResult: async () => undefined,
      registrySecretFor: async () => undefined,
    },
    readSecret: async () => null,
    credentials: new ExecutionCredentials('a-test-signing-secret-of-enough-length'),
    serverUrl: () => 'http://hangar.hangar.svc:8080',
    defaultImage: 'debian:bookworm',
    defaults: { memoryBytes: 2 * 1024 ** 3, cpus: 2, pids: 512 },
    maximums: { memoryBytes: 4 * 1024 ** 3, cpus: 4, pids: 4096 },
    setupTimeoutMinutes: 10,
    setupNetwork: false,
    harnessTimeoutMinutes: 60,
    harnessNetwork: false,
    modelCredentials: {},
    operatorFile: undefined,
    owner: 'kubernetes:prod',
  };
  const claimed = (agentConfig: Record<string, unknown>): ClaimedRun => ({
    id: 'run-1',
    team_uid: 'team-1',
    execution_id: 1,
    prompt: 'p',
    agent_config: agentConfig,
    environment_id: 'env-1',
    conversation_id: null,
    harness: null,
    attachment_count: 0,
    state: 'CLAIMED',
  });

  test('its limits over the environment’s, its runtime class, and its placement within the operator’s template', async () => {
    const planned = await planExecution(
      planner,
      claimed({
        runner_id: 'r1',
        runner: {
          name: 'big',
          sandbox: 'kubernetes',
          limits: { cpus: 3 },
          kubernetes: { runtime_class_name: 'kata', pod_template: { spec: { nodeSelector: { size: 'big' } } } },
        },
      }),
    );
    assert.ok(!('problem' in planned), JSON.stringify(planned));
    const { job } = executionObjects(planned);
    const spec = job.spec!.template.spec!;
    assert.equal(spec.runtimeClassName, 'kata');
    assert.deepEqual(spec.nodeSelector, { size: 'big', pool: 'runs' });
    assert.equal(spec.priorityClassName, 'runs', "the operator's template stays under the runner's placement");
    const task = spec.containers.find((container) => container.name === 'task')!;
    assert.deepEqual(task.resources?.limits, { cpu: '3000m', memory: '1073741824' });
  });

  test('without a runner, the operator’s runtime class and the environment’s limits', async () => {
    const planned = await planExecution(planner, claimed({}));
    assert.ok(!('problem' in planned));
    const spec = executionObjects(planned).job.spec!.template.spec!;
    assert.equal(spec.runtimeClassName, 'gvisor');
    assert.deepEqual(spec.containers.find((container) => container.name === 'task')!.resources?.limits, {
      cpu: '1000m',
      memory: '1073741824',
    });
  });

  test('a runner of another sandbox kind is a problem of the run, not a Job', async () => {
    const planned = await planExecution(
      planner,
      claimed({ runner_id: 'r2', runner: { name: 'box', sandbox: 'bwrap' } }),
    );
    assert.ok('problem' in planned);
    assert.match(planned.problem, /runner box names the bwrap sandbox/);
  });
});
