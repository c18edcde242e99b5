import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { conversationBlocks, eventually, outputTexts, script, timelineTypes, waitForState } from '../support/engine.js';
import type { GitFixtures } from '../support/git.js';
import type { GitHttpServer } from '../support/git-http.js';
import { type GitHubServer, testAppKey } from '../support/github-server.js';
import { type GitHubStack, startGitHubStack } from '../support/github-stack.js';
import { createRun } from '../support/runs.js';
import type { TestServer } from '../support/server.js';

// The GitHub integration end to end (issue 30): a real git smart-HTTP server and a real GitHub REST server, the
// App's JWT checked for real, Octokit pointed at them. One server for the file: the runs follow each other.

let stack: GitHubStack;
let fixtures: GitFixtures;
let git: GitHttpServer;
let github: GitHubServer;
let hangar: TestServer;
let environmentId: string;
// A directory only root may write: a command of the run's repository executed by the server (root) would leave the
// marker here; run as the run user, or in the sandbox, it cannot.
const markerDirectory = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-gh-marker-'));
const marker = path.join(markerDirectory, 'pwned');

before(async () => {
  stack = await startGitHubStack({
    repos: [
      { owner: 'acme', repo: 'api' },
      { owner: 'other', repo: 'svc' },
    ],
    installations: [
      { id: 7, account: 'acme', repos: ['acme/api'] },
      { id: 8, account: 'other', repos: ['other/svc'] },
    ],
  });
  ({ fixtures, git, github, hangar, environmentId } = stack);
});

after(async () => {
  await stack?.stop();
  fs.rmSync(markerDirectory, { recursive: true, force: true });
});

/** The file at `branch` of the bare repository owner/repo, as GitHub now has it. */
function remoteFile(owner: string, repo: string, branch: string, file: string): string {
  return execFileSync('git', ['--git-dir', path.join(fixtures.root, owner, repo), 'show', `${branch}:${file}`], {
    encoding: 'utf8',
  });
}

async function timeline(runId: string): Promise<any[]> {
  return (await hangar.request('GET', `/agent/runs/${runId}/timeline`)).body.events;
}

const asksTheHelper = `printf 'protocol=${'http'}\\nhost=HOST\\npath=acme/api\\n\\n' | git credential fill`;
const countTokensInEnvironment = 'echo "env-tokens:$(env | grep -c ghs_)"';

describe('GitHub integration', () => {
  test('a team links an installation: GitHub is asked whose it is; an unknown one is refused', async () => {
    const linked = await hangar.request('PUT', `/api/v1/admin/teams/${hangar.teamUid}/github/installations/7`);
    assert.equal(linked.status, 200, JSON.stringify(linked.body));
    assert.deepEqual(
      linked.body.links.map((link: any) => [link.installation_id, link.account]),
      [[7, 'acme']],
    );
    const unknown = await hangar.request('PUT', `/api/v1/admin/teams/${hangar.teamUid}/github/installations/999`);
    assert.equal(unknown.status, 404);
    // The App's JWT was checked for real on each call.
    assert.ok(github.callsTo('GET', /^\/app\/installations\/7$/).every((call) => call.status === 200));
  });

  test('a run edits the private repository; Hangar commits, pushes hangar/<run>, opens the PR and records it; the token stays out of everything', async () => {
    const helper = asksTheHelper.replace('HOST', new URL(git.baseUrl).host);
    const runId = await createRun(hangar, {
      prompt: script(
        { sh: 'cd api && echo "one more line" >> README.md' },
        { sh: helper },
        { sh: countTokensInEnvironment },
        { done: 'Add a line to the README\n\nThe README says more now.' },
      ),
      config: { environment_id: environmentId },
    });
    const run = await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR');
    assert.equal(run.state, 'SUCCEEDED', JSON.stringify(run.status_message));

    // The token: minted for this repository only, with the run's permissions, revoked at the end.
    const minted = github.callsTo('POST', /^\/app\/installations\/7\/access_tokens$/);
    assert.equal(minted.length, 1);
    assert.deepEqual(minted[0]!.body, {
      repositories: ['api'],
      permissions: { contents: 'write', pull_requests: 'write', issues: 'write' },
    });
    const tokens = [...github.tokens.values()];
    assert.equal(tokens.length, 1);
    const token = tokens[0]!.token;
    assert.equal(tokens[0]!.revoked, true, 'the token ends with the execution');
    // The clone and the push authenticated with it (basic auth, x-access-token).
    assert.ok(
      git.requests.some((r) => r.service === 'git-upload-pack' && r.user === 'x-access-token' && r.status === 200),
    );
    assert.ok(git.requests.some((r) => r.service === 'git-receive-pack' && r.status === 200));

    // The branch holds the agent's edit, committed with its summary.
    assert.equal(remoteFile('acme', 'api', `hangar/${runId}`, 'README.md'), '# api\none more line\n');
    const message = execFileSync(
      'git',
      ['--git-dir', path.join(fixtures.root, 'acme', 'api'), 'log', '-1', '--format=%s', `hangar/${runId}`],
      { encoding: 'utf8' },
    );
    assert.equal(message.trim(), 'Add a line to the README');

    // The pull request: from the branch to the default branch, titled by the summary, linking the run.
    assert.equal(github.pulls.length, 1);
    const pull = github.pulls[0]!;
    assert.equal(pull.head, `hangar/${runId}`);
    assert.equal(pull.base, 'main');
    assert.equal(pull.title, 'Add a line to the README');
    assert.equal(pull.draft, false);
    assert.match(pull.body, new RegExp(`/runs/${runId}`));
    const artifact = run.artifacts.find((a: any) => a.artifact_type === 'PULL_REQUEST');
    assert.equal(artifact.data.url, `${github.baseUrl}/acme/api/pull/1`);
    assert.equal(artifact.data.branch, `hangar/${runId}`);
    const opened = (await timeline(runId)).find((event) => event.event_type === 'github_pull_request_opened');
    assert.equal(opened.payload.url, artifact.data.url);
    // The pull request's address finds its run.
    const found = await hangar.request(
      'GET',
      `/agent/run-by-external-reference?url=${encodeURIComponent(artifact.data.url)}`,
    );
    assert.deepEqual(found.body, { run_id: runId });

    // The harness's git got the token through the credential helper, not its environment; it is redacted.
    const texts = await outputTexts(hangar, runId);
    assert.ok(
      texts.some((text) => text.includes('password=[REDACTED:GITHUB_TOKEN]')),
      texts.join('\n'),
    );
    assert.ok(texts.includes('env-tokens:0\n'), texts.join('\n'));
    const everything = JSON.stringify([
      texts,
      await conversationBlocks(hangar, runId),
      await timeline(runId),
      (await hangar.request('GET', `/agent/runs/${runId}`)).body,
    ]);
    assert.ok(!everything.includes(token), 'the token is in no transcript, conversation, timeline or run');
  });

  test('a follow-up continues on the branch, pushes again and updates the same pull request', async () => {
    const runId = github.pulls[0]!.head.slice('hangar/'.length);
    const response = await hangar.request('POST', `/agent/runs/${runId}/followups`, { body: { message: 'more' } });
    assert.ok(response.status === 200 || response.status === 202, JSON.stringify(response.body));
    await eventually(
      'the follow-up updated the pull request',
      async () => (await timelineTypes(hangar, runId)).includes('github_pull_request_updated'),
      60_000,
    );
    const run = await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR');
    assert.equal(run.state, 'SUCCEEDED');
    // The follow-up cloned the branch (its first line is there) and added its own.
    assert.equal(remoteFile('acme', 'api', `hangar/${runId}`, 'README.md'), '# api\none more line\none more line\n');
    assert.equal(github.pulls.length, 1, 'the same pull request');
    assert.equal(github.callsTo('PATCH', /\/pulls\/1$/).length, 1);
    assert.equal(run.artifacts.filter((a: any) => a.artifact_type === 'PULL_REQUEST').length, 1);
  });

  test('a hostile repository configuration runs no code in the server; GH_TOKEN is given when the run opts in', async () => {
    const runId = await createRun(hangar, {
      prompt: script(
        {
          sh: [
            'cd api',
            `git config core.fsmonitor "touch ${marker}"`,
            `git config core.hooksPath .git/evil`,
            'mkdir -p .git/evil',
            `printf '#!/bin/sh\\ntouch ${marker}\\n' > .git/evil/post-commit`,
            'chmod +x .git/evil/post-commit',
            'echo hostile > hostile.txt',
          ].join(' && '),
        },
        { sh: countTokensInEnvironment },
        { done: 'Hostile change' },
      ),
      config: { environment_id: environmentId, github: { gh_token: true, pull_request: 'draft' } },
    });
    const run = await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR');
    assert.equal(run.state, 'SUCCEEDED', JSON.stringify(run.status_message));
    assert.equal(fs.existsSync(marker), false, "no command of the run's repository ran as the server");
    assert.equal(remoteFile('acme', 'api', `hangar/${runId}`, 'hostile.txt'), 'hostile\n');
    const pull = github.pulls.find((p) => p.head === `hangar/${runId}`);
    assert.equal(pull?.draft, true);
    assert.ok((await outputTexts(hangar, runId)).includes('env-tokens:1\n'));
  });

  test('a push refused by a protected branch is on the timeline with the reason; the run stays SUCCEEDED', async () => {
    git.protect('acme', 'api', 'GH006: Protected branch update failed for refs/heads/hangar.');
    try {
      const runId = await createRun(hangar, {
        prompt: script({ sh: 'cd api && echo x > x.txt' }, { done: 'Add x' }),
        config: { environment_id: environmentId },
      });
      const run = await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR');
      assert.equal(run.state, 'SUCCEEDED');
      assert.match(run.status_message.message, /^Add x\n\n.*could not publish it to GitHub: acme\/api: .*GH006/s);
      const failed = (await timeline(runId)).find((event) => event.event_type === 'github_publish_failed');
      assert.match(failed.payload.reason, /GH006: Protected branch update failed/);
      // GitHub's words, not the server's git command line.
      assert.doesNotMatch(failed.payload.reason, /credential\.helper|Command failed/);
      assert.equal(run.artifacts.length, 0);
    } finally {
      git.unprotect('acme', 'api');
    }
  });

  test("a revoked installation and a bad App key fail the setup with GitHub's answer", async () => {
    const linked = await hangar.request('PUT', `/api/v1/admin/teams/${hangar.teamUid}/github/installations/8`);
    assert.equal(linked.status, 200);
    github.revokeInstallation(8);
    const other = await hangar.request('POST', '/api/v1/environments', {
      body: { name: 'svc', github_repos: [{ owner: 'other', repo: 'svc' }] },
    });
    const revoked = await waitForState(
      hangar,
      await createRun(hangar, { prompt: script({ done: 'never' }), config: { environment_id: other.body.uid } }),
      'SUCCEEDED',
      'FAILED',
      'ERROR',
    );
    assert.equal(revoked.state, 'FAILED');
    assert.equal(revoked.status_message.error_code, 'environment_setup_failed');
    assert.match(revoked.status_message.message, /installation 8: GitHub answered 404 \(Not Found\)/);

    const old = github.replaceAppKey(testAppKey().publicKey);
    try {
      const badKey = await waitForState(
        hangar,
        await createRun(hangar, { prompt: script({ done: 'never' }), config: { environment_id: environmentId } }),
        'SUCCEEDED',
        'FAILED',
        'ERROR',
      );
      assert.equal(badKey.state, 'FAILED');
      assert.match(badKey.status_message.message, /GitHub answered 401 \(A JSON web token could not be decoded\)/);
    } finally {
      github.replaceAppKey(old);
    }
  });

  test('a team secret holding a personal access token is the simpler path: it clones and opens the pull request', async () => {
    const pat = 'github_pat_TEST0123456789abcdefghij';
    github.addPersonalToken(pat, ['other/svc']);
    const unlinked = await hangar.request('DELETE', `/api/v1/admin/teams/${hangar.teamUid}/github/installations/8`);
    assert.equal(unlinked.status, 200);
    const secret = await hangar.request('POST', '/api/v1/secrets', { body: { name: 'GITHUB_PAT', value: pat } });
    assert.equal(secret.status, 201, JSON.stringify(secret.body));
    const linked = await hangar.request('PUT', `/api/v1/admin/teams/${hangar.teamUid}/github/token-secret`, {
      body: { secret_name: 'GITHUB_PAT' },
    });
    assert.equal(linked.status, 200, JSON.stringify(linked.body));
    const other = await hangar.request('POST', '/api/v1/environments', {
      body: { name: 'svc with a PAT', github_repos: [{ owner: 'other', repo: 'svc' }] },
    });
    const runId = await createRun(hangar, {
      prompt: script({ sh: 'cd svc && echo fixed > fix.txt' }, { done: 'Fix svc' }),
      config: { environment_id: other.body.uid },
    });
    const run = await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR');
    assert.equal(run.state, 'SUCCEEDED', JSON.stringify(run.status_message));
    assert.equal(remoteFile('other', 'svc', `hangar/${runId}`, 'fix.txt'), 'fixed\n');
    assert.ok(github.pulls.some((pull) => pull.repo === 'svc' && pull.head === `hangar/${runId}`));
    // The team's token is not the execution's to revoke.
    assert.equal(github.tokens.get(pat)?.revoked, false);
  });
});
