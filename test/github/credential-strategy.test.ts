/**
 * config.credential_strategy on GitHub's side (the GitHub double, a real git server): EXECUTOR (the default) mints
 * the installation token with the run's permissions; CREATOR mints it as the creator's GitHub identity, the login the
 * installation's allow-list maps them to, limited to what that login may do (write keeps the run's permissions,
 * read gives contents read), and refuses, failing the setup with GitHub's reason in words, a creator mapped to no
 * login or a login without access to the repository.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { script, waitForState } from '../support/engine.js';
import type { GitHubServer } from '../support/github-server.js';
import { type GitHubStack, startGitHubStack } from '../support/github-stack.js';
import { createRun } from '../support/runs.js';
import type { TestServer } from '../support/server.js';

let stack: GitHubStack;
let github: GitHubServer;
let hangar: TestServer;
let environmentId: string;

before(async () => {
  stack = await startGitHubStack({
    repos: [{ owner: 'acme', repo: 'api' }],
    installations: [{ id: 7, account: 'acme', repos: ['acme/api'] }],
    link: [7],
    collaborators: { 'octo-writer': 'write', 'octo-reader': 'read' },
  });
  ({ github, hangar, environmentId } = stack);
});

after(async () => {
  await stack?.stop();
});

async function runWith(strategy: 'CREATOR' | 'EXECUTOR' | undefined) {
  const before = github.callsTo('POST', /^\/app\/installations\/7\/access_tokens$/).length;
  const runId = await createRun(hangar, {
    prompt: script({ done: 'nothing to change' }),
    config: { environment_id: environmentId, ...(strategy ? { credential_strategy: strategy } : {}) },
  });
  const run = await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR');
  const minted = github.callsTo('POST', /^\/app\/installations\/7\/access_tokens$/).slice(before);
  return { run, minted };
}

const allow = (login: string) =>
  hangar.request('PUT', `/api/v1/admin/teams/${hangar.teamUid}/github/installations/7/allowed-logins/${login}`, {
    body: { user_uid: hangar.userUid },
  });
const disallow = (login: string) =>
  hangar.request('DELETE', `/api/v1/admin/teams/${hangar.teamUid}/github/installations/7/allowed-logins/${login}`);

test("EXECUTOR, the default: the team's installation token with the run's permissions", async () => {
  for (const strategy of [undefined, 'EXECUTOR'] as const) {
    const { run, minted } = await runWith(strategy);
    assert.equal(run.state, 'SUCCEEDED', JSON.stringify(run.status_message));
    assert.equal(run.agent_config.credential_strategy, 'EXECUTOR');
    assert.equal(minted.length, 1);
    assert.deepEqual(minted[0]!.body?.permissions, { contents: 'write', pull_requests: 'write', issues: 'write' });
  }
});

test('CREATOR with a creator mapped to no GitHub login: the setup fails, saying so, and no run token is minted', async () => {
  const { run, minted } = await runWith('CREATOR');
  assert.equal(run.state, 'FAILED');
  assert.equal(run.status_message.error_code, 'environment_setup_failed');
  assert.match(run.status_message.message, /credential_strategy is CREATOR/);
  assert.match(run.status_message.message, /allow-list/);
  assert.equal(minted.length, 0);
});

test("CREATOR with the creator's login: the token is limited to that login's permission", async () => {
  assert.equal((await allow('octo-writer')).status, 200);
  const writer = await runWith('CREATOR');
  assert.equal(writer.run.state, 'SUCCEEDED', JSON.stringify(writer.run.status_message));
  assert.equal(writer.run.agent_config.credential_strategy, 'CREATOR');
  // GitHub was asked for that login's permission on the repository.
  assert.ok(github.callsTo('GET', /^\/repos\/acme\/api\/collaborators\/octo-writer\/permission$/).length > 0);
  const runToken = writer.minted.filter((call) => !('metadata' in ((call.body?.permissions as object) ?? {})));
  assert.deepEqual(runToken.at(-1)!.body?.permissions, { contents: 'write', pull_requests: 'write', issues: 'write' });

  assert.equal((await disallow('octo-writer')).status, 200);
  assert.equal((await allow('octo-reader')).status, 200);
  const reader = await runWith('CREATOR');
  assert.equal(reader.run.state, 'SUCCEEDED', JSON.stringify(reader.run.status_message));
  const readToken = reader.minted.filter((call) => !('metadata' in ((call.body?.permissions as object) ?? {})));
  assert.deepEqual(readToken.at(-1)!.body?.permissions, { contents: 'read' });
});

test('CREATOR with a login that has no access to the repository: refused in words', async () => {
  assert.equal((await disallow('octo-reader')).status, 200);
  assert.equal((await allow('octo-stranger')).status, 200);
  const { run } = await runWith('CREATOR');
  assert.equal(run.state, 'FAILED');
  assert.match(run.status_message.message, /octo-stranger has no access to acme\/api/);
});
