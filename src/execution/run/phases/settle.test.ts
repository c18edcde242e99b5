import assert from 'node:assert/strict';
import { test } from 'node:test';
import { phaseScope } from '../../../../test/support/fake-ledger.js';
import { HarnessStartError } from '../../harnesses/harness.js';
import { WorkspacePathError } from '../../workspace/files.js';
import { failed } from '../outcomes.js';
import { errorEnding, type Settling, settle } from './settle.js';

const shutdown = [{ type: 'vm_shutdown' }];
const tail = [{ runId: 'run-1', executionId: 1, stream: 'output', line: '{}', at: new Date() }] as never[];
const settling = (overrides: Partial<Settling> = {}): Settling => ({
  outcome: null,
  unavailableBeforeAgent: false,
  agentMayHaveRun: false,
  agentStarted: false,
  transcriptTail: [],
  ...overrides,
});
const succeeded = { state: 'SUCCEEDED' as const, statusMessage: null, usage: null };

test('an outcome is written with the sandbox going away and the last transcript lines, in one finish', async () => {
  const { scope, ledger } = phaseScope();
  await settle(scope, settling({ outcome: succeeded, agentMayHaveRun: true, transcriptTail: tail }), shutdown);
  assert.deepEqual(
    ledger.writes.map((write) => write.kind),
    ['finish'],
  );
  const { finish } = ledger.of('finish')[0]!;
  assert.deepEqual([finish.outcome, finish.before, finish.transcript], [succeeded, shutdown, tail]);
});

test('a cancel after the start clears the sandbox; the outcome is the cancel, not the agent', async () => {
  const { scope, ledger, stop } = phaseScope();
  stop.abort('cancelled');
  await settle(
    scope,
    settling({ outcome: succeeded, agentMayHaveRun: true, agentStarted: true, transcriptTail: tail }),
    shutdown,
  );
  assert.deepEqual(
    ledger.writes.map((write) => write.kind),
    ['transcript', 'events', 'clearSandboxIfCancelled'],
  );
});

test('a cancel before the start has no sandbox to clear; a lost run only writes its shutdown', async () => {
  for (const reason of ['cancelled', 'lost']) {
    const { scope, ledger, stop } = phaseScope();
    stop.abort(reason);
    await settle(scope, settling(), shutdown);
    assert.deepEqual(
      ledger.writes.map((write) => write.kind),
      ['events'],
      reason,
    );
  }
});

test('a shutdown before the agent may have run puts the run back in the queue', async () => {
  const { scope, ledger, stop } = phaseScope();
  stop.abort('shutdown');
  await settle(scope, settling(), shutdown);
  assert.deepEqual(ledger.of('requeue'), [
    { kind: 'requeue', reason: 'the executor shut down before the agent started' },
  ]);
});

test('a shutdown once the agent may have run ends the run ERROR, retryable: it never runs twice', async () => {
  const { scope, ledger, stop } = phaseScope();
  stop.abort('shutdown');
  await settle(scope, settling({ agentMayHaveRun: true }), shutdown);
  assert.equal(ledger.of('requeue').length, 0);
  const { finish } = ledger.of('finish')[0]!;
  assert.deepEqual(finish.outcome, failed({ kind: 'shutdown' }));
  assert.deepEqual(finish.before, []);
});

test('the database unavailable before the agent queues the run again', async () => {
  const { scope, ledger } = phaseScope();
  await settle(scope, settling({ unavailableBeforeAgent: true }), shutdown);
  assert.deepEqual(ledger.of('requeue'), [
    { kind: 'requeue', reason: 'the database was unavailable before the agent started' },
  ]);
});

test('a phase that threw ends the execution by what it threw', () => {
  const { scope } = phaseScope();
  const start = errorEnding(scope, new HarnessStartError('no key', 'integration_not_configured'), false);
  assert.equal(start.outcome?.statusMessage?.error_code, 'integration_not_configured');
  const link = errorEnding(scope, new WorkspacePathError('.hangar/x', 'link'), false);
  assert.equal(link.outcome?.statusMessage?.error_code, 'environment_setup_failed');
  const gone = Object.assign(new Error('Connection terminated unexpectedly'), { code: '57P01' });
  assert.deepEqual(errorEnding(scope, gone, false), { outcome: null, unavailableBeforeAgent: true });
  assert.deepEqual(errorEnding(scope, gone, true), {
    outcome: failed({ kind: 'database_unavailable' }),
    unavailableBeforeAgent: false,
  });
  assert.deepEqual(errorEnding(scope, new Error('bug'), true).outcome, failed({ kind: 'internal' }));
});

test('a phase that threw after a stop leaves the end to the stop', () => {
  const { scope, stop } = phaseScope();
  stop.abort('cancelled');
  assert.deepEqual(errorEnding(scope, new Error('bug'), true), { outcome: null, unavailableBeforeAgent: false });
});
