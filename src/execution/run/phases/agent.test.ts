import assert from 'node:assert/strict';
import { test } from 'node:test';
import { phaseScope } from '../../../../test/support/fake-ledger.js';
import type { Harness, HarnessSession, HarnessTask } from '../../harnesses/harness.js';
import type { SandboxExit } from '../../sandbox/backend.js';
import type { Workspaces } from '../../workspace/workspace.js';
import { FollowupDelivery } from '../followups.js';
import { awaitAgent, beginAgent, spawnAgent } from './agent.js';
import { ends } from './types.js';

const exit = (overrides: Partial<SandboxExit> = {}): SandboxExit => ({
  code: 0,
  signal: null,
  timedOut: false,
  killed: false,
  outputTruncated: false,
  ...overrides,
});

/**
 * A harness in memory: it writes `lines` when started, then runs until `end` is called or it is cancelled (its
 * process then ends by SIGTERM). What it was started with and whether it was cancelled are kept.
 */
function scriptedHarness(lines: string[]) {
  const state = { tasks: [] as HarnessTask[], cancelled: 0, end: (_exit: SandboxExit) => {} };
  const harness: Harness = {
    name: 'scripted',
    async start(task, sink) {
      state.tasks.push(task);
      let end!: (exit: SandboxExit) => void;
      const exited = new Promise<SandboxExit>((resolve) => (end = resolve));
      state.end = end;
      for (const line of lines) sink.output(line);
      const session: HarnessSession = {
        acceptsInput: false,
        send: () => false,
        cancel: async () => {
          state.cancelled += 1;
          end(exit({ code: null, signal: 'SIGTERM', killed: true }));
        },
        exited,
      };
      return session;
    },
  };
  return { harness, state };
}

function agentScope(options: Parameters<typeof phaseScope>[0] = {}) {
  const workspaces = { owner: undefined } as unknown as Workspaces;
  const made = phaseScope({ ...options, context: { workspaces, ...options.context } });
  const { scope } = made;
  const followups = new FollowupDelivery(scope.context.ledger, scope.run.id, 1, scope.signal, scope.context.log);
  return { ...made, followups };
}

test('the intent is the last write before the spawn, and the start is recorded once the harness exists', async () => {
  const { scope, ledger, followups } = agentScope();
  ledger.followups = [{ seq: '7', message: 'Also the docs' }];
  const { harness, state } = scriptedHarness(['{"type":"done","summary":"Fixed"}']);
  const begun = await beginAgent(scope, '/w/run-1.1', harness, undefined, null, undefined);
  assert.ok(!ends(begun));
  assert.deepEqual(
    ledger.writes.map((write) => write.kind),
    ['beginAgentStart'],
  );
  assert.equal(begun.continue.recordedFirst, undefined);
  const spawned = await spawnAgent(scope, begun.continue, followups);
  assert.ok(!ends(spawned));
  assert.deepEqual(state.tasks[0]?.followups, ['Also the docs']);
  const { transition } = ledger.of('transition')[0]!;
  assert.deepEqual([transition.from, transition.to, transition.started], ['CLAIMED', 'INPROGRESS', true]);
  assert.equal(transition.takeInputsUpTo, '7');
  assert.equal(transition.events[0]?.type, 'agent_started');
  state.end(exit());
  const finished = await awaitAgent(scope, begun.continue, spawned.continue, followups);
  assert.ok(!ends(finished));
  assert.deepEqual(
    [finished.continue.outcome.state, finished.continue.outcome.statusMessage],
    ['SUCCEEDED', { message: 'Fixed' }],
  );
  // The harness's lines are written with the end, not before it.
  assert.equal(finished.continue.transcriptTail.length, 1);
  assert.equal(ledger.of('transcript').length, 0);
});

test("a worker's link records the start before the spawn, with the follow-ups it took", async () => {
  const { scope, ledger, followups } = agentScope();
  ledger.beginAgentStart = undefined;
  ledger.followups = [{ seq: '1', message: 'Also the docs' }];
  const { harness, state } = scriptedHarness([]);
  const begun = await beginAgent(scope, '/w/run-1.1', harness, undefined, null, undefined);
  assert.ok(!ends(begun));
  assert.equal(begun.continue.recordedFirst?.moved, true);
  assert.equal(ledger.of('transition')[0]?.transition.takeInputsUpTo, undefined);
  const spawned = await spawnAgent(scope, begun.continue, followups);
  assert.ok(!ends(spawned));
  assert.deepEqual(state.tasks[0]?.followups, ['Also the docs']);
  assert.equal(ledger.of('transition').length, 1);
  state.end(exit({ code: 2 }));
  const finished = await awaitAgent(scope, begun.continue, spawned.continue, followups);
  assert.ok(!ends(finished));
  assert.equal(finished.continue.outcome.statusMessage?.message, 'The harness scripted exited with code 2');
});

test('a run cancelled or taken back while its harness started: the harness stops, and nothing is recorded', async () => {
  const { scope, ledger, followups } = agentScope();
  const { harness, state } = scriptedHarness(['{"type":"done"}']);
  const begun = await beginAgent(scope, '/w/run-1.1', harness, undefined, null, undefined);
  assert.ok(!ends(begun));
  ledger.moves = false;
  assert.deepEqual(await spawnAgent(scope, begun.continue, followups), { outcome: null });
  assert.equal(state.cancelled, 1);
  assert.equal(ledger.of('transcript').length, 0);
});

test('stopped before the intent: no harness, nothing written', async () => {
  const { scope, ledger, stop } = agentScope();
  stop.abort('shutdown');
  const { harness } = scriptedHarness([]);
  assert.deepEqual(await beginAgent(scope, '/w/run-1.1', harness, undefined, null, undefined), { outcome: null });
  assert.deepEqual(ledger.writes, []);
});

test('a stop while the agent works stops its harness; the end is the stop, with the last lines kept', async () => {
  const { scope, stop, followups } = agentScope();
  const { harness, state } = scriptedHarness(['{"type":"progress","message":"working"}']);
  const begun = await beginAgent(scope, '/w/run-1.1', harness, undefined, null, undefined);
  assert.ok(!ends(begun));
  const spawned = await spawnAgent(scope, begun.continue, followups);
  assert.ok(!ends(spawned));
  const finishing = awaitAgent(scope, begun.continue, spawned.continue, followups);
  stop.abort('cancelled');
  const finished = await finishing;
  assert.equal(state.cancelled, 1);
  assert.ok(ends(finished));
  assert.equal(finished.outcome, null);
  assert.equal(finished.transcriptTail?.length, 1);
});

test('the first usage past the spend cap stops the harness, and the run fails budget_exceeded', async () => {
  const { scope, ledger, followups } = agentScope({ run: { agent_config: { max_cost_usd: 0.01 } } });
  const { harness, state } = scriptedHarness(['{"type":"usage","input_tokens":10,"inference_cost":0.02}']);
  const begun = await beginAgent(scope, '/w/run-1.1', harness, undefined, null, undefined);
  assert.ok(!ends(begun));
  const spawned = await spawnAgent(scope, begun.continue, followups);
  assert.ok(!ends(spawned));
  const finished = await awaitAgent(scope, begun.continue, spawned.continue, followups);
  assert.equal(state.cancelled, 1);
  assert.ok(!ends(finished));
  const { outcome } = finished.continue;
  assert.deepEqual([outcome.state, outcome.statusMessage?.error_code], ['FAILED', 'budget_exceeded']);
  assert.deepEqual(outcome.usage, { input_tokens: 10, total_tokens: 10, inference_cost: 0.02 });
  // What it spent went to the ledger as it grew.
  assert.ok(ledger.of('usage').length >= 1);
});
