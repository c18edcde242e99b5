import assert from 'node:assert/strict';
import { test } from 'node:test';
import { phaseScope } from '../../../../test/support/fake-ledger.js';
import type { GitHubSession } from '../../github/session.js';
import { publish } from './publish.js';

const succeeded = { state: 'SUCCEEDED' as const, statusMessage: { message: 'Fixed' }, usage: null };
/** A GitHub session that only says it was asked. */
function github() {
  const asked: string[] = [];
  const session = {
    publish: async (workspace: string, outcome: typeof succeeded) => {
      asked.push(workspace);
      return { ...outcome, statusMessage: { message: 'Fixed, and published' } };
    },
  } as unknown as GitHubSession;
  return { session, asked };
}

test("a SUCCEEDED run of a linked team is published, and the session's outcome is the run's", async () => {
  const { scope } = phaseScope();
  const { session, asked } = github();
  const outcome = await publish(scope, session, '/w/run-1.1', succeeded);
  assert.deepEqual(asked, ['/w/run-1.1']);
  assert.equal(outcome.statusMessage?.message, 'Fixed, and published');
});

test('nothing is published without GitHub, for a run that did not succeed, or once stopped', async () => {
  const { scope, stop } = phaseScope();
  const { session, asked } = github();
  assert.equal(await publish(scope, null, '/w', succeeded), succeeded);
  const blocked = { ...succeeded, state: 'BLOCKED' as const };
  assert.equal(await publish(scope, session, '/w', blocked), blocked);
  stop.abort('cancelled');
  assert.equal(await publish(scope, session, '/w', succeeded), succeeded);
  assert.deepEqual(asked, []);
});
