import assert from 'node:assert/strict';
import { test } from 'node:test';
import { phaseScope } from '../../../../test/support/fake-ledger.js';
import type { Harness } from '../../harnesses/harness.js';
import { prepare } from './prepare.js';

const harness = { name: 'command', start: async () => null as never } satisfies Harness;

test("an operator's harness needs no model; the environment is read from the ledger", async () => {
  const { scope, ledger } = phaseScope({
    run: { environment_id: 'env-1' },
    context: { harnesses: new Map([['command', harness]]) },
  });
  const config = { name: 'env', description: '', github_repos: [], setup_commands: [] };
  ledger.environments.set('env-1', { ...config, failure_session_retention_minutes: null });
  const named: string[] = [];
  const result = await prepare(scope, (name) => named.push(name));
  assert.ok('continue' in result);
  assert.deepEqual(
    [result.continue.harnessName, result.continue.harness, result.continue.builtIn],
    ['command', harness, undefined],
  );
  assert.equal(result.continue.environment?.name, 'env');
  assert.deepEqual(named, ['command']);
  // Under bwrap or the process sandbox, the sandbox is ready now: said with the execution's next write.
  assert.deepEqual(scope.record.withUnwritten([]), [
    { type: 'worker_container_ready', payload: { sandbox: 'process' } },
  ]);
});

test('the run names its harness; one the server lacks is left for after the setup', async () => {
  const { scope } = phaseScope({ run: { harness: 'codex' } });
  const result = await prepare(scope, () => undefined);
  assert.ok('continue' in result);
  assert.deepEqual([result.continue.harnessName, result.continue.harness], ['codex', undefined]);
});
