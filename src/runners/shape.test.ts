import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkRunner, executionShape, type RunnerPolicy } from './shape.js';

const policy: RunnerPolicy = {
  sandbox: 'kubernetes',
  maximums: { memoryBytes: 8 * 1024 ** 3, cpus: 4, pids: 4096 },
  runtimeClasses: ['gvisor'],
  runsInPods: true,
};

const problem = (body: Record<string, unknown>) => {
  const checked = checkRunner({ name: 'r', ...body }, policy);
  assert.ok('problem' in checked, `accepted ${JSON.stringify(body)}`);
  return checked.problem;
};

test('a runner keeps what it asks for, within the maxima and the allowed runtime classes', () => {
  assert.deepEqual(
    checkRunner(
      {
        name: 'gpu',
        sandbox: 'kubernetes',
        limits: { cpus: 4, memory: '8g' },
        kubernetes: { runtime_class_name: 'gvisor', pod_template: { spec: { nodeSelector: { pool: 'big' } } } },
      },
      policy,
    ),
    {
      shape: {
        sandbox: 'kubernetes',
        limits: { cpus: 4, memory: '8g' },
        kubernetes: { runtime_class_name: 'gvisor', pod_template: { spec: { nodeSelector: { pool: 'big' } } } },
      },
    },
  );
  assert.deepEqual(checkRunner({ name: 'plain', limits: {} }, policy), { shape: {} });
  assert.match(problem({ limits: { cpus: 4.5 } }), /HANGAR_RUN_CPUS_MAX/);
  assert.match(problem({ limits: { memory: '9g' } }), /HANGAR_RUN_MEMORY_MAX/);
  assert.match(problem({ limits: { pids: 5000 } }), /HANGAR_RUN_PIDS_MAX/);
  assert.match(problem({ limits: { memory: '1m' } }), /at least 16m/);
  assert.match(problem({ sandbox: 'container' }), /runs kubernetes sandboxes/);
  assert.match(problem({ kubernetes: { runtime_class_name: 'runc' } }), /not one this server allows: gvisor/);
  assert.match(problem({ kubernetes: { runtime_class_name: 'Not_A_Name' } }), /not a RuntimeClass name/);
});

test('a pod template may only place the pod, never change what it may do', () => {
  for (const spec of [
    { hostNetwork: true },
    { volumes: [{ name: 'host', hostPath: { path: '/' } }] },
    { serviceAccountName: 'admin' },
    { securityContext: { runAsUser: 0 } },
    { containers: [{ name: 'task', securityContext: { privileged: true } }] },
  ])
    assert.match(problem({ kubernetes: { pod_template: { spec } } }), /may set only nodeSelector/);
  // Labels could match the operator's NetworkPolicies, annotations loosen AppArmor: the operator's alone.
  assert.match(
    problem({ kubernetes: { pod_template: { metadata: { labels: { 'hangar.dev/network': 'internet' } } } } }),
    /only spec/,
  );
  const elsewhere = checkRunner(
    { name: 'r', kubernetes: { runtime_class_name: 'gvisor' } },
    { ...policy, sandbox: 'container', runsInPods: false },
  );
  assert.ok('problem' in elsewhere && /go with the kubernetes sandbox/.test(elsewhere.problem));
});

test("an execution takes the recorded runner's limits over the environment's, and refuses another kind", () => {
  assert.deepEqual(executionShape({}, { memory: '1g' }, 'container'), { limits: { memory: '1g' } });
  assert.deepEqual(executionShape({}, undefined, 'container'), { limits: undefined });
  const config = { runner_id: 'x', runner: { name: 'big', sandbox: 'container', limits: { cpus: 2 } } };
  assert.deepEqual(executionShape(config, { memory: '1g', cpus: 1 }, 'container'), {
    limits: { memory: '1g', cpus: 2 },
  });
  const refused = executionShape(config, undefined, 'bwrap');
  assert.ok('problem' in refused);
  assert.match(refused.problem, /runner big names the container sandbox, but it executes where the sandbox is bwrap/);
  // A runner that names no kind runs wherever the run executes.
  assert.ok(!('problem' in executionShape({ runner: { name: 'any', limits: { pids: 99 } } }, undefined, 'bwrap')));
});

test("under Kubernetes: the runner's runtime class, and its placement over the operator's template", () => {
  const config = {
    runner: {
      name: 'pool',
      kubernetes: {
        runtime_class_name: 'gvisor',
        pod_template: { spec: { nodeSelector: { pool: 'big' }, tolerations: [{ key: 'big' }] } },
      },
    },
  };
  const operator = {
    metadata: { labels: { team: 'x' } },
    spec: { nodeSelector: { zone: 'a' }, tolerations: [{ key: 'ops' }], priorityClassName: 'low' },
  };
  assert.deepEqual(executionShape(config, undefined, 'kubernetes', operator), {
    limits: undefined,
    runtimeClassName: 'gvisor',
    podTemplate: {
      metadata: { labels: { team: 'x' } },
      spec: {
        nodeSelector: { zone: 'a', pool: 'big' },
        tolerations: [{ key: 'ops' }, { key: 'big' }],
        priorityClassName: 'low',
      },
    },
  });
});
