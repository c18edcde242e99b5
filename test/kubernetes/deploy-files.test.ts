/**
 * deploy/kubernetes/: every kustomization renders with `kubectl kustomize` (Debian's kubernetes-client), and every
 * object it renders passes the Kubernetes OpenAPI schemas, unknown fields included, and the API server's rules the
 * double checks (test/support/kubernetes/). KEDA's ScaledObject has no schema here: only its shape is checked.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, test } from 'node:test';
import YAML from 'yaml';
import { unknownFields } from '../support/kubernetes/schema.js';
import type { KubeObject } from '../support/kubernetes/store.js';
import { validateObject } from '../support/kubernetes/validation.js';

function kubectl(): string | false {
  try {
    execFileSync('kubectl', ['version', '--client'], { stdio: 'ignore' });
    return false;
  } catch {
    if (process.env.CI === 'true')
      throw new Error('CI=true, but kubectl is missing: .ci/run installs kubernetes-client');
    return 'no kubectl: apt-get install -y kubernetes-client';
  }
}

function render(directory: string): KubeObject[] {
  const text = execFileSync('kubectl', ['kustomize', directory], { encoding: 'utf8' });
  return YAML.parseAllDocuments(text).map((document) => document.toJSON() as KubeObject);
}

function check(objects: KubeObject[]): void {
  for (const object of objects) {
    const name = `${object.kind}/${object.metadata.name}`;
    assert.deepEqual(validateObject(object), [], `${name} is valid`);
    assert.deepEqual(unknownFields(object), [], `${name} has no unknown fields`);
  }
}

describe('deploy/kubernetes', { skip: kubectl() }, () => {
  test("the base renders the server, its RBAC and the run pods' network policies, each valid", () => {
    const objects = render('deploy/kubernetes/base');
    check(objects);
    assert.deepEqual(objects.map((object) => `${object.kind}/${object.metadata.name}`).sort(), [
      'ConfigMap/hangar',
      'Deployment/hangar',
      'NetworkPolicy/hangar-run-pods',
      'NetworkPolicy/hangar-run-pods-offline',
      'PodDisruptionBudget/hangar',
      'Role/hangar',
      'RoleBinding/hangar',
      'Service/hangar',
      'ServiceAccount/hangar',
    ]);
    const deployment = objects.find((object) => object.kind === 'Deployment') as KubeObject & {
      spec: {
        replicas: number;
        template: { spec: { containers: Array<{ env: Array<{ name: string; valueFrom?: unknown }> }> } };
      };
    };
    assert.equal(deployment.spec.replicas, 2);
    const databaseUrl = deployment.spec.template.spec.containers[0]?.env.find(
      (variable) => variable.name === 'DATABASE_URL',
    );
    assert.deepEqual(databaseUrl?.valueFrom, { secretKeyRef: { name: 'hangar-database', key: 'url' } });
    const role = objects.find((object) => object.kind === 'Role') as KubeObject & {
      rules: Array<{ resources: string[] }>;
    };
    assert.deepEqual(role.rules.flatMap((rule) => rule.resources).sort(), [
      'events',
      'jobs',
      'networkpolicies',
      'pods',
      'pods/log',
      'secrets',
    ]);
    const internet = objects.find((object) => object.metadata.name === 'hangar-run-pods') as KubeObject & {
      spec: { egress: Array<{ to: Array<{ ipBlock?: { cidr: string; except: string[] } }> }> };
    };
    const v4 = internet.spec.egress.flatMap((rule) => rule.to).find((peer) => peer.ipBlock?.cidr === '0.0.0.0/0');
    for (const range of ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '169.254.0.0/16', '100.64.0.0/10'])
      assert.ok(v4?.ipBlock?.except.includes(range), `${range} is excepted`);
  });

  test('the example overlay renders into its namespace with the database Secret, each valid', () => {
    const objects = render('deploy/kubernetes/overlays/example');
    check(objects);
    assert.ok(objects.every((object) => object.kind === 'Namespace' || object.metadata.namespace === 'hangar'));
    const secret = objects.find((object) => object.kind === 'Secret');
    assert.equal(secret?.metadata.name, 'hangar-database');
    const config = objects.find((object) => object.kind === 'ConfigMap') as KubeObject & {
      data: Record<string, string>;
    };
    assert.equal(config.data.HANGAR_KUBERNETES_RUNTIME_CLASS, 'gvisor');
    assert.equal(config.data.HANGAR_SANDBOX, 'kubernetes');
  });

  test('the KEDA example renders a ScaledObject on the queue depth', () => {
    const [scaled] = render('deploy/kubernetes/keda') as Array<
      KubeObject & {
        spec: { scaleTargetRef: { name: string }; triggers: Array<{ type: string; metadata: { query: string } }> };
      }
    >;
    assert.equal(scaled?.apiVersion, 'keda.sh/v1alpha1');
    assert.equal(scaled?.kind, 'ScaledObject');
    assert.equal(scaled?.spec.triggers[0]?.type, 'prometheus');
    assert.match(scaled?.spec.triggers[0]?.metadata.query ?? '', /hangar_runs_queue_depth/);
  });
});
