import assert from 'node:assert/strict';
import { test } from 'node:test';
import { phaseScope } from '../../../../test/support/fake-ledger.js';
import type { EnvironmentConfig } from '../../../environments/index.js';
import type { SandboxBackend, SandboxOpenRequest, SandboxOpenResult } from '../../sandbox/backend.js';
import { openSandbox } from './sandbox.js';

/** A backend with a sandbox per execution, in memory: what it was asked to open, and what it answers. */
function containers(answer: SandboxOpenResult = { ok: true, details: { image: 'img@sha256:1' } }) {
  const opened: SandboxOpenRequest[] = [];
  const closed: string[] = [];
  const backend = {
    kind: 'container',
    capabilities: { perExecution: true },
    open: async (request: SandboxOpenRequest) => {
      opened.push(request);
      return answer;
    },
    close: async (workspace: string) => void closed.push(workspace),
    retire: async (workspace: string) => void closed.push(workspace),
    removeUnused: async () => 0,
    spawn: () => {
      throw new Error('no processes here');
    },
  } as unknown as SandboxBackend;
  return { backend, opened, closed };
}

const environment = (overrides: Partial<EnvironmentConfig> = {}): EnvironmentConfig => ({
  name: 'env',
  description: '',
  github_repos: [],
  setup_commands: [],
  failure_session_retention_minutes: null,
  ...overrides,
});

const scopeWith = (backend: SandboxBackend, environmentId: string | null = null) =>
  phaseScope({ run: { environment_id: environmentId }, context: { sandbox: backend } });

test('a backend whose processes stand alone has no sandbox to open', async () => {
  const { scope, ledger } = phaseScope();
  assert.deepEqual(await openSandbox(scope, '/w/run-1.1', undefined, undefined), { continue: undefined });
  assert.deepEqual(ledger.writes, []);
});

test('a run without an environment opens its container at once; ready rides with the next write', async () => {
  const { backend, opened } = containers();
  const { scope } = scopeWith(backend);
  const result = await openSandbox(scope, '/w/run-1.1', undefined, { name: 'h', network: true, start: null as never });
  assert.ok('continue' in result && result.continue);
  assert.equal(opened.length, 1);
  assert.deepEqual([opened[0]!.workspace, opened[0]!.image, opened[0]!.network], ['/w/run-1.1', undefined, true]);
  assert.deepEqual(scope.record.withUnwritten([]), [
    { type: 'worker_container_ready', payload: { sandbox: 'container', image: 'img@sha256:1' } },
  ]);
  assert.equal(typeof result.continue.pullMs, 'number');
});

test('an environment leaves the opening to its setup', async () => {
  const { backend, opened } = containers();
  const { scope } = scopeWith(backend, 'env-1');
  const result = await openSandbox(scope, '/w/run-1.1', environment(), undefined);
  assert.ok('continue' in result && result.continue);
  assert.equal(opened.length, 0);
});

test('a container that cannot be opened fails the run with the reason', async () => {
  const { backend } = containers({ ok: false, message: 'the pull of img failed' });
  const { scope } = scopeWith(backend);
  const result = await openSandbox(scope, '/w/run-1.1', undefined, undefined);
  assert.ok('outcome' in result);
  assert.deepEqual(result.outcome?.statusMessage, {
    message: 'the pull of img failed',
    error_code: 'environment_setup_failed',
    retryable: false,
  });
});

test('stopped while the container opened: nothing to record', async () => {
  const { backend } = containers();
  const { scope, stop } = scopeWith(backend);
  backend.open = async () => {
    stop.abort('cancelled');
    return { ok: true, details: {} };
  };
  assert.deepEqual(await openSandbox(scope, '/w/run-1.1', undefined, undefined), { outcome: null });
});

test('an image ID, or registry credentials that do not exist or are not username:password, are refused before a pull', async () => {
  const { backend, opened } = containers();
  const { scope, ledger } = scopeWith(backend, 'env-1');
  const sandbox = await openSandbox(scope, '/w/run-1.1', environment({ docker_image: 'sha256:abc' }), undefined);
  assert.ok('continue' in sandbox && sandbox.continue);
  const byId = await sandbox.continue.open();
  assert.ok(!byId.ok && byId.outcome);
  assert.match(String(byId.outcome.statusMessage?.message), /^The environment's docker_image /);

  const privately = environment({ docker_image: 'registry.example/team/img:1', registry_secret_name: 'REG' });
  const withSecret = await openSandbox(scope, '/w/run-1.1', privately, undefined);
  assert.ok('continue' in withSecret && withSecret.continue);
  const missing = await withSecret.continue.open();
  assert.ok(!missing.ok && missing.outcome);
  assert.match(String(missing.outcome.statusMessage?.message), /names the team secret REG, which does not exist/);
  ledger.secrets.set('registry', 'no-colon');
  const malformed = await withSecret.continue.open();
  assert.ok(!malformed.ok && malformed.outcome);
  assert.match(String(malformed.outcome.statusMessage?.message), /must be username:password/);
  assert.equal(opened.length, 0);

  ledger.secrets.set('registry', 'robot:s3cret-password-value');
  assert.deepEqual(await withSecret.continue.open(), { ok: true });
  assert.deepEqual(opened[0]!.registryAuth, {
    username: 'robot',
    password: 's3cret-password-value',
    serveraddress: 'registry.example',
  });
  // The password is the run's secret from now on: kept out of everything it writes.
  assert.equal(scope.redactor.text('s3cret-password-value'), '[REDACTED:registry secret REG]');
});

test('a snapshot image opens without the environment checks; close and retire reach the backend', async () => {
  const { backend, opened, closed } = containers();
  const { scope } = scopeWith(backend, 'env-1');
  const sandbox = await openSandbox(scope, '/w/run-1.1', environment({ registry_secret_name: 'REG' }), undefined);
  assert.ok('continue' in sandbox && sandbox.continue);
  assert.deepEqual(await sandbox.continue.open('hangar-snapshot:k1'), { ok: true });
  assert.equal(opened[0]!.image, 'hangar-snapshot:k1');
  await sandbox.continue.retire();
  await sandbox.continue.close();
  assert.deepEqual(closed, ['/w/run-1.1', '/w/run-1.1']);
});
