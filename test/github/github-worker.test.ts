import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  conversationBlocks,
  eventually,
  harnessEnv,
  outputTexts,
  script,
  timelineTypes,
  waitForState,
} from '../support/engine.js';
import type { GitFixtures } from '../support/git.js';
import type { GitHttpServer } from '../support/git-http.js';
import type { GitHubServer } from '../support/github-server.js';
import { type GitHubStack, startGitHubStack } from '../support/github-stack.js';
import { stopChild } from '../support/processes.js';
import { createRun } from '../support/runs.js';
import type { TestServer } from '../support/server.js';
import { startWorker, type WorkerProcess, waitForConnections } from '../support/workers.js';

// Self-hosted workers and GitHub (issue 30): a real `hangar worker` process executes the runs. The server mints each
// execution's installation token (the App's key stays in the server) and hands it to the worker executing it; the
// worker clones with it, gives its harness git access through a credential helper, and publishes as the server's
// engine does. The token is revoked when the execution ends, and is in no log line of the server or the worker.

let stack: GitHubStack;
let fixtures: GitFixtures;
let git: GitHttpServer;
let github: GitHubServer;
let hangar: TestServer;
let environmentId: string;
const serverLogs: string[] = [];
const workers: WorkerProcess[] = [];

function worker(id: string): WorkerProcess {
  const started = startWorker(hangar, id, {
    env: harnessEnv({}, { HANGAR_GIT_BASE_URL: git.baseUrl, HANGAR_LOG_LEVEL: 'debug' }),
  });
  workers.push(started);
  return started;
}

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
    link: [7, 8],
    env: { HANGAR_LOG_LEVEL: 'debug', HANGAR_WORKER_HEARTBEAT_SECONDS: '1' },
    logs: (line) => serverLogs.push(line),
  });
  ({ fixtures, git, github, hangar, environmentId } = stack);
  worker('gh-box');
  await waitForConnections(hangar, 'gh-box', 1);
});

after(async () => {
  for (const started of workers) await stopChild(started.child, 'SIGKILL');
  await stack?.stop();
  for (const started of workers) fs.rmSync(started.dataDir, { recursive: true, force: true });
});

function remoteFile(owner: string, repo: string, branch: string, file: string): string {
  return execFileSync('git', ['--git-dir', path.join(fixtures.root, owner, repo), 'show', `${branch}:${file}`], {
    encoding: 'utf8',
  });
}

async function timeline(runId: string): Promise<any[]> {
  return (await hangar.request('GET', `/agent/runs/${runId}/timeline`)).body.events;
}

const asksTheHelper = () =>
  `printf 'protocol=http\\nhost=${new URL(git.baseUrl).host}\\npath=acme/api\\n\\n' | git credential fill`;
const countTokensInEnvironment = 'echo "env-tokens:$(env | grep -c ghs_)"';

describe('GitHub on self-hosted workers', () => {
  test("a worker's run gets the token the server minted for its repository, and Hangar opens the pull request", async () => {
    const runId = await createRun(hangar, {
      prompt: script(
        { sh: 'cd api && echo "from the worker" >> README.md' },
        { sh: asksTheHelper() },
        { sh: countTokensInEnvironment },
        { done: 'Add a line from the worker\n\nThe README says more now.' },
      ),
      config: { environment_id: environmentId, worker_host: 'gh-box' },
    });
    const run = await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR');
    assert.equal(run.state, 'SUCCEEDED', JSON.stringify(run.status_message));
    const claimed = (await timeline(runId)).find((event) => event.event_type === 'oz_run_claimed');
    assert.equal(claimed.payload.worker_host, 'gh-box', 'the worker executed it');

    // Minted by the server (the JWT signed with the App's key it alone holds), for this repository only.
    const minted = github.callsTo('POST', /^\/app\/installations\/7\/access_tokens$/);
    assert.equal(minted.length, 1);
    assert.deepEqual(minted[0]!.body, {
      repositories: ['api'],
      permissions: { contents: 'write', pull_requests: 'write', issues: 'write' },
    });
    const issued = [...github.tokens.values()];
    assert.equal(issued.length, 1);
    const token = issued[0]!.token;
    assert.equal(issued[0]!.revoked, true, 'the token ended with the execution');
    assert.ok(git.requests.some((r) => r.service === 'git-upload-pack' && r.user === 'x-access-token'));
    assert.ok(git.requests.some((r) => r.service === 'git-receive-pack' && r.status === 200));

    // The branch, the pull request and its artifact, as on the server's engine.
    assert.equal(remoteFile('acme', 'api', `hangar/${runId}`, 'README.md'), '# api\nfrom the worker\n');
    const pull = github.pulls.find((candidate) => candidate.head === `hangar/${runId}`);
    assert.ok(pull, 'the pull request was opened');
    assert.equal(pull.base, 'main');
    assert.equal(pull.title, 'Add a line from the worker');
    assert.equal(pull.draft, false);
    assert.match(pull.body, new RegExp(`${hangar.url}/runs/${runId}`));
    const artifact = run.artifacts.find((a: any) => a.artifact_type === 'PULL_REQUEST');
    assert.equal(artifact.data.url, `${github.baseUrl}/acme/api/pull/${pull.number}`);
    assert.ok((await timelineTypes(hangar, runId)).includes('github_pull_request_opened'));

    // The harness's git had it through the credential helper, not its environment; it is redacted everywhere.
    const texts = await outputTexts(hangar, runId);
    assert.ok(
      texts.some((text) => text.includes('password=[REDACTED:GITHUB_TOKEN]')),
      texts.join('\n'),
    );
    assert.ok(texts.includes('env-tokens:0\n'), texts.join('\n'));
    const everything = JSON.stringify([texts, await conversationBlocks(hangar, runId), await timeline(runId), run]);
    assert.ok(!everything.includes(token), 'the token is in no transcript, conversation, timeline or run');

    // No log line of the server (at debug level) or of the worker carries it; both logged about the run.
    const server = serverLogs.join('');
    assert.ok(server.includes(runId), 'the server logged about the run');
    assert.ok(!server.includes(token), 'the token is in no line the server logged');
    const workerOutput = workers[0]!.output();
    assert.ok(workerOutput.includes(runId), 'the worker logged about the run');
    assert.ok(!workerOutput.includes(token), 'the token is in no line the worker logged');
  });

  test('a follow-up on the worker gets a new token, pushes to the same branch and updates the pull request', async () => {
    const pull = github.pulls.find((candidate) => candidate.head.startsWith('hangar/'))!;
    const runId = pull.head.slice('hangar/'.length);
    const response = await hangar.request('POST', `/agent/runs/${runId}/followups`, { body: { message: 'more' } });
    assert.ok(response.status === 200 || response.status === 202, JSON.stringify(response.body));
    await eventually(
      'the follow-up updated the pull request',
      async () => (await timelineTypes(hangar, runId)).includes('github_pull_request_updated'),
      60_000,
    );
    const run = await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR');
    assert.equal(run.state, 'SUCCEEDED');
    assert.equal(
      remoteFile('acme', 'api', `hangar/${runId}`, 'README.md'),
      '# api\nfrom the worker\nfrom the worker\n',
    );
    assert.equal(github.pulls.filter((candidate) => candidate.head === pull.head).length, 1, 'the same pull request');
    const tokens = [...github.tokens.values()];
    assert.equal(tokens.length, 2, 'one token per execution');
    assert.ok(tokens.every((issued) => issued.revoked));
    const server = serverLogs.join('');
    const workerOutput = workers[0]!.output();
    for (const { token } of tokens) assert.ok(!server.includes(token) && !workerOutput.includes(token));
  });

  test("a push refused by a protected branch is on the worker's run's timeline; the run stays SUCCEEDED", async () => {
    git.protect('acme', 'api', 'GH006: Protected branch update failed for refs/heads/hangar.');
    try {
      const runId = await createRun(hangar, {
        prompt: script({ sh: 'cd api && echo x > x.txt' }, { done: 'Add x' }),
        config: { environment_id: environmentId, worker_host: 'gh-box' },
      });
      const run = await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR');
      assert.equal(run.state, 'SUCCEEDED');
      assert.match(run.status_message.message, /^Add x\n\n.*could not publish it to GitHub: acme\/api: .*GH006/s);
      const failed = (await timeline(runId)).find((event) => event.event_type === 'github_publish_failed');
      assert.match(failed.payload.reason, /GH006: Protected branch update failed/);
      assert.doesNotMatch(failed.payload.reason, /credential\.helper|Command failed/);
      assert.equal(run.artifacts.length, 0);
    } finally {
      git.unprotect('acme', 'api');
    }
  });

  test("a revoked installation fails the worker's setup with GitHub's answer", async () => {
    github.revokeInstallation(8);
    const other = await hangar.request('POST', '/api/v1/environments', {
      body: { name: 'svc', github_repos: [{ owner: 'other', repo: 'svc' }] },
    });
    const runId = await createRun(hangar, {
      prompt: script({ done: 'never' }),
      config: { environment_id: other.body.uid, worker_host: 'gh-box' },
    });
    const run = await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR');
    assert.equal(run.state, 'FAILED');
    assert.equal(run.status_message.error_code, 'environment_setup_failed');
    assert.match(run.status_message.message, /installation 8: GitHub answered 404 \(Not Found\)/);
    const failed = (await timeline(runId)).find((event) => event.event_type === 'github_token_failed');
    assert.match(failed.payload.reason, /GitHub answered 404/);
  });

  test('the token of a worker that vanished mid-run is revoked by the server once the run is no longer its', async () => {
    const doomed = worker('gh-doomed');
    await waitForConnections(hangar, 'gh-doomed', 1);
    const before = new Set(github.tokens.keys());
    const runId = await createRun(hangar, {
      prompt: script({ say: 'working' }, { sleep: 300_000 }),
      config: { environment_id: environmentId, worker_host: 'gh-doomed' },
    });
    await waitForState(hangar, runId, 'INPROGRESS');
    const minted = [...github.tokens.values()].filter((issued) => !before.has(issued.token));
    assert.equal(minted.length, 1);
    assert.equal(minted[0]!.revoked, false, 'valid while the execution runs');
    await stopChild(doomed.child, 'SIGKILL');
    // Its lease lapses (6 s), the run ends; the server's sweep revokes what it minted for the execution.
    const ended = await waitForState(hangar, runId, 'ERROR', 'FAILED', 'SUCCEEDED');
    assert.equal(ended.state, 'ERROR');
    await github.until("the server revoked the vanished worker's token", () => minted[0]!.revoked, 30_000);
  });
});
