import assert from 'node:assert/strict';
import { test } from 'node:test';
import { phaseScope } from '../../../../test/support/fake-ledger.js';
import type { Harness } from '../../harnesses/harness.js';
import type { Workspaces } from '../../workspace/workspace.js';
import { ready } from './ready.js';

const harness = { name: 'command', start: async () => null as never } satisfies Harness;

test('a harness this server lacks fails the run once its environment is set up', async () => {
  const { scope } = phaseScope();
  const result = await ready(scope, '/w/run-1.1', 'codex', undefined, undefined);
  assert.ok('outcome' in result);
  assert.deepEqual(result.outcome?.statusMessage, {
    message: 'The harness "codex" is not configured on this server',
    error_code: 'integration_not_configured',
    retryable: false,
  });
});

test("the run's files are added to the workspace, after its environment's setup", async () => {
  const added: string[] = [];
  const workspaces = { addFiles: async (directory: string) => void added.push(directory) } as unknown as Workspaces;
  const { scope } = phaseScope({ run: { attachment_count: 2 }, context: { workspaces } });
  assert.deepEqual(await ready(scope, '/w/run-1.1', 'command', harness, undefined), {
    continue: { harness, guestGitHome: undefined },
  });
  assert.deepEqual(added, ['/w/run-1.1']);
});

test("in another team's environment, the owner's git settings are cleaned first; a failure fails the run", async () => {
  const guest = {
    name: 'env',
    description: '',
    github_repos: [{ owner: 'acme', repo: 'app' }],
    setup_commands: [],
    failure_session_retention_minutes: null,
    guest_run: { owner_team_uid: 'team-2', secrets_allowed: false },
  };
  let answer: { ok: true; home: string } | { ok: false; message: string } = { ok: true, home: '/w/run-1.1/.home' };
  const workspaces = { cleanOwnersGitConfig: async () => answer } as unknown as Workspaces;
  const { scope } = phaseScope({ context: { workspaces } });
  assert.deepEqual(await ready(scope, '/w/run-1.1', 'command', harness, guest), {
    continue: { harness, guestGitHome: '/w/run-1.1/.home' },
  });
  answer = { ok: false, message: 'could not clean app' };
  const refused = await ready(scope, '/w/run-1.1', 'command', harness, guest);
  assert.ok('outcome' in refused);
  assert.equal(refused.outcome?.statusMessage?.error_code, 'environment_setup_failed');
});
