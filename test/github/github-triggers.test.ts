import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sign } from '@octokit/webhooks-methods';
import { fileURLToPath } from 'node:url';
import { eventually, outputTexts, waitForState } from '../support/engine.js';
import type { GitHubServer } from '../support/github-server.js';
import { type GitHubStack, startGitHubStack } from '../support/github-stack.js';
import type { TestServer } from '../support/server.js';

// Runs started from GitHub (issue 30, item 5): signed deliveries of the App's webhook, a real server and database,
// the command harness completing the run, the REST server recording what Hangar says in the thread.

const SECRET = 'app-webhook-secret-0123456789';
let stack: GitHubStack;
let github: GitHubServer;
let hangar: TestServer;
let environmentId: string;
let nextDelivery = 1;
const SCRIPT_HARNESS = fileURLToPath(new URL('../support/script-harness.mjs', import.meta.url));
// The runs GitHub starts: read the thread from the workspace file, edit the repository, finish (Hangar opens the PR).
const worker = {
  command: [process.execPath, SCRIPT_HARNESS],
  timeout_minutes: 5,
  env: {
    SCRIPT_STEPS: JSON.stringify([
      { cat: 'event-payload.json' },
      { sh: 'cd api && echo "one more line" >> README.md' },
      { done: 'Make the README longer\n\nAs asked in the issue.' },
    ]),
  },
};

before(async () => {
  stack = await startGitHubStack({
    repos: [{ owner: 'acme', repo: 'api' }],
    installations: [{ id: 7, account: 'acme', repos: ['acme/api'] }],
    link: [7],
    harnesses: { script: worker },
    env: { HANGAR_GITHUB_WEBHOOK_SECRET: SECRET, HANGAR_GITHUB_LABEL: 'hangar-fix' },
  });
  ({ github, hangar, environmentId } = stack);
});

after(async () => {
  await stack?.stop();
});

const issueUrl = (number: number) => `https://github.com/acme/api/issues/${number}`;

function commentDelivery(number: number, comment: string): string {
  return JSON.stringify({
    action: 'created',
    issue: { number, html_url: issueUrl(number), title: `Issue ${number}`, body: 'The README is too short.' },
    comment: {
      id: 1000 + number,
      body: comment,
      user: { login: 'octocat', type: 'User' },
      html_url: `${issueUrl(number)}#issuecomment-${1000 + number}`,
    },
    repository: { name: 'api', owner: { login: 'acme' } },
    installation: { id: 7 },
  });
}

async function deliver(body: string, signature?: string, event = 'issue_comment') {
  return hangar.request('POST', '/webhooks/github-app', {
    apiKey: null,
    body,
    headers: {
      'content-type': 'application/json',
      'x-github-event': event,
      'x-github-delivery': `delivery-${nextDelivery++}`,
      'x-hub-signature-256': signature ?? (await sign(SECRET, body)),
    },
  });
}

async function runCount(): Promise<number> {
  const rows = await hangar.db.selectFrom('runs').select('id').execute();
  return rows.length;
}

describe('runs started from GitHub', () => {
  test('a signed comment mentioning @hangar starts a run in the environment naming the repository; the issue finds it', async () => {
    const body = commentDelivery(1, 'Hey @hangar, please make the README longer.');
    const delivered = await deliver(body);
    assert.equal(delivered.status, 202, JSON.stringify(delivered.body));
    assert.equal(delivered.body.runs.length, 1);
    const runId = delivered.body.runs[0];
    const run = await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR');
    assert.equal(run.state, 'SUCCEEDED', JSON.stringify(run.status_message));
    assert.equal(run.config?.environment_id ?? environmentId, environmentId);

    // The prompt fences the thread as untrusted material in the workspace file, as webhook deliveries are.
    const stored = await hangar.db
      .selectFrom('runs')
      .select(['prompt', 'source'])
      .where('id', '=', runId)
      .executeTakeFirstOrThrow();
    assert.match(String(stored.prompt), /acme\/api#1/);
    assert.match(String(stored.prompt), /untrusted context/);
    assert.doesNotMatch(String(stored.prompt), /make the README longer/, 'the comment stays out of the instructions');

    // The workspace held the thread as data.
    assert.ok((await outputTexts(hangar, runId)).some((text) => text.includes('make the README longer')));

    // Hangar replied once in the thread with a link to the run, then edited that comment with the outcome and PR.
    await eventually('the reply tells the outcome', () =>
      github.comments.some((comment) => comment.issue === 1 && comment.body.includes('SUCCEEDED')),
    );
    const replies = github.comments.filter((comment) => comment.owner === 'acme' && comment.issue === 1);
    assert.equal(replies.length, 1, 'one comment, edited, not a stream');
    assert.match(replies[0]!.body, new RegExp(`runs/${runId}`));
    assert.match(replies[0]!.body, /Pull request: .*\/acme\/api\/pull\/\d+/);
    assert.equal(github.callsTo('POST', /^\/repos\/acme\/api\/issues\/1\/comments$/).length, 1);
    assert.equal(github.callsTo('PATCH', /^\/repos\/acme\/api\/issues\/comments\/\d+$/).length, 1);

    const found = await hangar.request(
      'GET',
      `/agent/run-by-external-reference?url=${encodeURIComponent(issueUrl(1))}`,
    );
    assert.equal(found.status, 200, JSON.stringify(found.body));
    assert.equal(found.body.run_id, runId);

    // The same delivery again (a replay, even under a new delivery ID) starts nothing new.
    const before = await runCount();
    const replayed = await deliver(body);
    assert.equal(replayed.status, 202);
    assert.deepEqual(replayed.body.runs, []);
    assert.equal(await runCount(), before);
  });

  test('an issue given the configured label starts a run; another label starts nothing', async () => {
    const labelled = (name: string) =>
      JSON.stringify({
        action: 'labeled',
        label: { name },
        issue: { number: 5, html_url: issueUrl(5), title: 'Issue 5', body: 'Typo in the README.' },
        repository: { name: 'api', owner: { login: 'acme' } },
        installation: { id: 7 },
      });
    const other = await deliver(labelled('bug'), undefined, 'issues');
    assert.deepEqual(other.body.runs, []);
    const delivered = await deliver(labelled('hangar-fix'), undefined, 'issues');
    assert.equal(delivered.status, 202, JSON.stringify(delivered.body));
    assert.equal(delivered.body.runs.length, 1);
    const run = await waitForState(hangar, delivered.body.runs[0], 'SUCCEEDED', 'FAILED', 'ERROR');
    assert.equal(run.state, 'SUCCEEDED', JSON.stringify(run.status_message));
    const found = await hangar.request(
      'GET',
      `/agent/run-by-external-reference?url=${encodeURIComponent(issueUrl(5))}`,
    );
    assert.equal(found.body.run_id, delivered.body.runs[0]);
  });

  test('a bad signature gets 401 and a comment without the mention starts nothing', async () => {
    const before = await runCount();
    const forged = await deliver(commentDelivery(2, '@hangar do it'), await sign('another-secret-0123456789', 'x'));
    assert.equal(forged.status, 401);
    const unsigned = await deliver(commentDelivery(3, '@hangar do it'), '');
    assert.equal(unsigned.status, 401);
    const quiet = await deliver(commentDelivery(4, 'Nothing for @hangarbot or mail@hangar.example here'));
    assert.equal(quiet.status, 202);
    assert.deepEqual(quiet.body.runs, []);
    assert.equal(await runCount(), before);
  });
});
