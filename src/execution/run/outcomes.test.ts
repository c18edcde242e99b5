import assert from 'node:assert/strict';
import { test } from 'node:test';
import { HarnessStartError } from '../harnesses/harness.js';
import type { SandboxExit } from '../sandbox/backend.js';
import { type Failure, type FailureKind, failed, harnessOutcome, publishFailed } from './outcomes.js';

const ended = { usage: { input_tokens: 3 }, eventPayload: { harness: 'h', exit_code: 1 } };

/** One failure of every kind: a kind missing here fails the type check (the record is keyed by every kind). */
const EXAMPLES: { [K in FailureKind]: Extract<Failure, { kind: K }> } = {
  start_refused: { kind: 'start_refused', error: new HarnessStartError('no key', 'integration_not_configured') },
  secrets_withheld: { kind: 'secrets_withheld', message: 'not here' },
  harness_not_configured: { kind: 'harness_not_configured', harness: 'codex' },
  guest_git_config: { kind: 'guest_git_config', message: 'could not clean' },
  workspace_refused: { kind: 'workspace_refused', message: 'a link' },
  image_refused: { kind: 'image_refused', problem: 'is an image ID' },
  registry_credentials: { kind: 'registry_credentials', message: 'no secret' },
  sandbox_not_opened: { kind: 'sandbox_not_opened', message: 'pull failed' },
  environment_missing: { kind: 'environment_missing', environmentId: 'env-1' },
  github_token: { kind: 'github_token', environmentId: 'env-1', reason: 'not installed' },
  setup_failed: { kind: 'setup_failed', environmentId: 'env-1', message: 'npm ci failed' },
  spend_cap: { kind: 'spend_cap', cap: 1, spent: 1.23456, usage: { inference_cost: 1.23456 } },
  database_unavailable: { kind: 'database_unavailable' },
  internal: { kind: 'internal' },
  shutdown: { kind: 'shutdown' },
  resource_limit: { kind: 'resource_limit', harness: 'h', limit: 'exceeded its memory limit of 1 GiB', ended },
  time_limit: { kind: 'time_limit', harness: 'h', ended },
  harness_exit: { kind: 'harness_exit', message: 'The harness h exited with code 1', ended },
};

/** Each kind's state and error_code, written out on their own. */
const EXPECTED: Record<FailureKind, [string, string | undefined]> = {
  start_refused: ['FAILED', 'integration_not_configured'],
  secrets_withheld: ['FAILED', 'not_authorized'],
  harness_not_configured: ['FAILED', 'integration_not_configured'],
  guest_git_config: ['FAILED', 'environment_setup_failed'],
  workspace_refused: ['FAILED', 'environment_setup_failed'],
  image_refused: ['FAILED', 'environment_setup_failed'],
  registry_credentials: ['FAILED', 'environment_setup_failed'],
  sandbox_not_opened: ['FAILED', 'environment_setup_failed'],
  environment_missing: ['FAILED', 'environment_setup_failed'],
  github_token: ['FAILED', 'environment_setup_failed'],
  setup_failed: ['FAILED', 'environment_setup_failed'],
  spend_cap: ['FAILED', 'budget_exceeded'],
  database_unavailable: ['ERROR', 'resource_unavailable'],
  internal: ['ERROR', 'internal_error'],
  shutdown: ['ERROR', 'resource_unavailable'],
  resource_limit: ['FAILED', 'resource_limit_exceeded'],
  time_limit: ['FAILED', 'budget_exceeded'],
  harness_exit: ['FAILED', undefined],
};

test('every failure kind has its state and error_code; ERROR may be retried, FAILED may not', () => {
  for (const [kind, failure] of Object.entries(EXAMPLES)) {
    const outcome = failed(failure);
    const [state, code] = EXPECTED[kind as FailureKind];
    assert.equal(outcome.state, state, kind);
    assert.equal(outcome.statusMessage?.error_code, code, kind);
    assert.equal(typeof outcome.statusMessage?.message, 'string', kind);
    if (code === undefined) assert.equal('retryable' in (outcome.statusMessage ?? {}), false, kind);
    else assert.equal(outcome.statusMessage?.retryable, state === 'ERROR', kind);
  }
});

test('a failure carries its usage and event payload where it has them', () => {
  assert.deepEqual(failed(EXAMPLES.spend_cap).usage, { inference_cost: 1.23456 });
  assert.match(String(failed(EXAMPLES.spend_cap).statusMessage?.message), /spend cap of 1 USD .* spent 1\.2346 USD/);
  assert.deepEqual(failed(EXAMPLES.github_token).eventPayload, { environment_id: 'env-1' });
  assert.deepEqual(failed(EXAMPLES.harness_exit).eventPayload, ended.eventPayload);
  assert.equal(failed(EXAMPLES.internal).eventPayload, undefined);
  assert.equal(failed(EXAMPLES.internal).usage, null);
});

test('a failed setup with a debug window says until when, and keeps the workspace', () => {
  const until = new Date('2026-01-01T00:10:00Z');
  const outcome = failed({ ...EXAMPLES.setup_failed, debug: { owner: 'engine-1', workspace: '/w/run-1.1', until } });
  assert.equal(outcome.statusMessage?.session_debug_until, until.toISOString());
  assert.deepEqual(outcome.debugSession, { owner: 'engine-1', workspace: '/w/run-1.1', until: until.toISOString() });
  assert.equal(failed(EXAMPLES.setup_failed).debugSession, undefined);
});

const exit = (overrides: Partial<SandboxExit> = {}): SandboxExit => ({
  code: 0,
  signal: null,
  timedOut: false,
  killed: false,
  outputTruncated: false,
  ...overrides,
});
const result = (overrides: Partial<Parameters<typeof harnessOutcome>[0]> = {}) => ({
  exit: exit(),
  final: null,
  usage: null,
  diagnostics: [],
  transcriptTail: [],
  ...overrides,
});

test('a harness ends by its final event first, then by how its process exited', () => {
  assert.equal(harnessOutcome(result(), 'h').state, 'SUCCEEDED');
  const done = harnessOutcome(result({ final: { type: 'done', summary: 'Fixed' } }), 'h');
  assert.deepEqual([done.state, done.statusMessage], ['SUCCEEDED', { message: 'Fixed' }]);
  const asked = harnessOutcome(
    result({ final: { type: 'ask_user', question: 'Which?' }, exit: exit({ code: 3 }) }),
    'h',
  );
  assert.deepEqual([asked.state, asked.statusMessage], ['BLOCKED', { message: 'Which?' }]);
  const refused = harnessOutcome(result({ final: { type: 'failed', message: 'no', error_code: 'x' } }), 'h');
  assert.deepEqual(refused.statusMessage, { message: 'no', error_code: 'x' });
  const crashed = harnessOutcome(
    result({ exit: exit({ code: 1 }), diagnostics: ['at x', "Error: Cannot find module 'y'", 'Node.js v20'] }),
    'h',
  );
  assert.deepEqual(crashed.statusMessage, {
    message: "The harness h exited with code 1: Error: Cannot find module 'y'",
  });
  assert.equal(crashed.eventPayload?.stderr_tail, "at x\nError: Cannot find module 'y'\nNode.js v20");
  const killed = harnessOutcome(result({ exit: exit({ code: null, signal: 'SIGKILL' }) }), 'h');
  assert.equal(killed.statusMessage?.message, 'The harness h was killed by SIGKILL');
  const limited = harnessOutcome(result({ exit: exit({ code: 137, limitExceeded: 'ran out of memory' }) }), 'h');
  assert.equal(limited.statusMessage?.error_code, 'resource_limit_exceeded');
  assert.equal(limited.eventPayload?.limit_exceeded, 'ran out of memory');
  const late = harnessOutcome(result({ exit: exit({ code: null, signal: 'SIGKILL', timedOut: true }) }), 'h');
  assert.deepEqual([late.statusMessage?.error_code, late.eventPayload?.timed_out], ['budget_exceeded', true]);
});

test('a publish that failed keeps the run SUCCEEDED and says what failed after the summary', () => {
  const outcome = { state: 'SUCCEEDED' as const, statusMessage: { message: 'Fixed' }, usage: null };
  const published = publishFailed(outcome, 'Fixed', ['o/r: refused']);
  assert.equal(published.state, 'SUCCEEDED');
  assert.match(String(published.statusMessage?.message), /^Fixed\n\nThe agent's work is done .*o\/r: refused$/);
});
