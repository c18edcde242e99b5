import assert from 'node:assert/strict';
import { test } from 'node:test';
import { phaseScope } from '../../../../test/support/fake-ledger.js';
import type { EnvironmentConfig } from '../../../environments/index.js';
import type { Workspaces } from '../../workspace/workspace.js';
import { connectEnvironment, setUpEnvironment } from './environment.js';

const environment = (overrides: Partial<EnvironmentConfig> = {}): EnvironmentConfig => ({
  name: 'env',
  description: '',
  github_repos: [{ owner: 'acme', repo: 'app' }],
  setup_commands: ['npm ci'],
  failure_session_retention_minutes: null,
  ...overrides,
});

/** Workspaces whose cold setup answers `result` (no clone, no command). */
const setUpAnswering = (result: { ok: true } | { ok: false; message: string }) =>
  ({ setUp: async () => result, setupNetwork: false }) as unknown as Workspaces;

test('an environment that no longer exists fails the run before anything is written', async () => {
  const { scope, ledger } = phaseScope({ run: { environment_id: 'env-1' } });
  const result = await connectEnvironment(scope, 'env-1', undefined);
  assert.ok('outcome' in result);
  assert.equal(result.outcome?.statusMessage?.error_code, 'environment_setup_failed');
  assert.deepEqual(ledger.writes, []);
});

test('the setup starts on the timeline; without GitHub there is no session', async () => {
  const { scope, ledger } = phaseScope({ run: { environment_id: 'env-1' } });
  const result = await connectEnvironment(scope, 'env-1', environment());
  assert.ok('continue' in result);
  assert.equal(result.continue.github, null);
  assert.deepEqual(ledger.of('events')[0]?.events, [
    {
      type: 'environment_setup_started',
      payload: { environment_id: 'env-1', repos: ['acme/app'], setup_commands: 1 },
    },
  ]);
});

test('a cold setup that passes is recorded and timed', async () => {
  const { scope, ledger } = phaseScope({
    run: { environment_id: 'env-1' },
    context: { workspaces: setUpAnswering({ ok: true }) },
  });
  const result = await setUpEnvironment(scope, '/w/run-1.1', 'env-1', environment(), null, 'command', undefined);
  assert.deepEqual(result, { continue: null });
  assert.deepEqual(ledger.of('recordSetupResult'), [{ kind: 'recordSetupResult', failed: false }]);
  const done = ledger.of('events').at(-1)!.events[0]!;
  assert.equal(done.type, 'environment_setup_done');
  assert.equal(done.payload?.path, 'cold');
  assert.deepEqual(Object.keys(done.payload?.steps_ms as object), ['setup']);
});

test('a failed setup without a debug window fails the run with its message', async () => {
  const { scope, ledger } = phaseScope({
    run: { environment_id: 'env-1' },
    context: { workspaces: setUpAnswering({ ok: false, message: 'npm ci exited with code 1' }) },
    retainsWorkspaces: true,
  });
  const result = await setUpEnvironment(scope, '/w/run-1.1', 'env-1', environment(), null, 'command', undefined);
  assert.ok('outcome' in result && result.outcome);
  assert.equal(result.retained, undefined);
  assert.deepEqual(result.outcome.statusMessage, {
    message: 'npm ci exited with code 1',
    error_code: 'environment_setup_failed',
    retryable: false,
  });
  assert.deepEqual(ledger.of('recordSetupResult'), [{ kind: 'recordSetupResult', failed: true }]);
  assert.equal(ledger.of('finish').length, 0);
});

test('a failed setup with a debug window ends the run at once and keeps its workspace', async () => {
  const { scope, ledger } = phaseScope({
    run: { environment_id: 'env-1' },
    context: { workspaces: setUpAnswering({ ok: false, message: 'npm ci exited with code 1' }) },
    retainsWorkspaces: true,
  });
  const debugged = environment({ failure_session_retention_minutes: 10 });
  const result = await setUpEnvironment(scope, '/w/run-1.1', 'env-1', debugged, null, 'command', undefined);
  assert.ok('outcome' in result);
  assert.equal(result.outcome, null);
  assert.equal(result.retained?.workspace, '/w/run-1.1');
  assert.equal(result.retained?.retentionMinutes, 10);
  const { finish } = ledger.of('finish')[0]!;
  assert.equal(finish.outcome.debugSession?.workspace, '/w/run-1.1');
  assert.equal(finish.outcome.statusMessage?.session_debug_until, result.retained?.until.toISOString());

  // Taken back meanwhile: nothing is kept.
  ledger.finishResult = 'lost';
  assert.deepEqual(await setUpEnvironment(scope, '/w/run-1.1', 'env-1', debugged, null, 'command', undefined), {
    outcome: null,
  });
});

test('a worker keeps no workspace, and a stop during setup records nothing of it', async () => {
  const { scope, ledger, stop } = phaseScope({
    run: { environment_id: 'env-1' },
    context: { workspaces: setUpAnswering({ ok: false, message: 'failed' }) },
  });
  const debugged = environment({ failure_session_retention_minutes: 10 });
  const kept = await setUpEnvironment(scope, '/w/run-1.1', 'env-1', debugged, null, 'command', undefined);
  assert.ok('outcome' in kept && kept.outcome && !kept.retained);
  stop.abort('cancelled');
  const before = ledger.writes.length;
  assert.deepEqual(await setUpEnvironment(scope, '/w/run-1.1', 'env-1', debugged, null, 'command', undefined), {
    outcome: null,
  });
  assert.equal(ledger.writes.length, before);
});
