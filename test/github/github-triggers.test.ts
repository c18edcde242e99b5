import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { sign } from '@octokit/webhooks-methods';
import { sql } from 'kysely';
import { pruneReplayKeys } from '../../src/webhooks/store.js';
import { outputTexts, waitForState } from '../support/engine.js';
import {
  APP_WEBHOOK_SECRET,
  commentDelivery,
  deliver as deliverTo,
  issueUrl,
  labelDelivery,
  pullUrl,
  reviewCommentDelivery,
  reviewDelivery,
} from '../support/github-deliveries.js';
import type { GitHubServer } from '../support/github-server.js';
import { type GitHubStack, startGitHubStack } from '../support/github-stack.js';
import type { TestServer } from '../support/server.js';

// Runs started from GitHub (issue 30, item 5): signed deliveries of the App's webhook, a real server and database,
// the command harness completing the run, the REST server recording what Hangar says in the thread.

let stack: GitHubStack;
let github: GitHubServer;
let hangar: TestServer;
let environmentId: string;
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
    env: { HANGAR_GITHUB_WEBHOOK_SECRET: APP_WEBHOOK_SECRET, HANGAR_GITHUB_LABEL: 'hangar-fix' },
  });
  ({ github, hangar, environmentId } = stack);
});

after(async () => {
  await stack?.stop();
});

const deliver = (body: string, signature?: string, event?: string) => deliverTo(hangar, body, { signature, event });

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
    assert.equal(run.agent_config?.environment_id, environmentId);

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
    await github.until('the reply tells the outcome', () =>
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
    assert.deepEqual(replayed.body, { duplicate: true, runs: [] });
    assert.equal(await runCount(), before);
  });

  test('an issue given the configured label starts a run; another label starts nothing', async () => {
    const other = await deliver(labelDelivery(5, 'bug'), undefined, 'issues');
    assert.deepEqual(other.body.runs, []);
    const delivered = await deliver(labelDelivery(5, 'hangar-fix'), undefined, 'issues');
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

  test("a review requesting changes starts a run in the pull request's thread; approvals, plain reviews and line comments start nothing", async () => {
    const before = await runCount();
    for (const state of ['approved', 'commented'])
      assert.deepEqual(
        (await deliver(reviewDelivery(11, { state, body: '@hangar looks fine' }), undefined, 'pull_request_review'))
          .body.runs,
        [],
      );
    // A review's line comments come as deliveries of their own: the review's submission is the one event.
    assert.deepEqual(
      (await deliver(reviewCommentDelivery(11, '@hangar rename this'), undefined, 'pull_request_review_comment')).body
        .runs,
      [],
    );
    assert.equal(await runCount(), before);

    // A fork's pull request: its branch is not the team's to push, so the run works from the default branch and
    // Hangar opens a pull request of its own.
    const review = reviewDelivery(12, {
      state: 'changes_requested',
      body: 'Please make the README longer too.',
      headRepo: 'someone/api',
    });
    const delivered = await deliver(review, undefined, 'pull_request_review');
    assert.equal(delivered.status, 202, JSON.stringify(delivered.body));
    assert.equal(delivered.body.runs.length, 1);
    const runId = delivered.body.runs[0];
    const run = await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR');
    assert.equal(run.state, 'SUCCEEDED', JSON.stringify(run.status_message));
    assert.equal(run.agent_config?.environment_id, environmentId);
    assert.equal(run.agent_config?.github, undefined);
    assert.ok(github.pulls.some((pull) => pull.head === `hangar/${runId}` && pull.state === 'open'));
    const stored = await hangar.db
      .selectFrom('runs')
      .select('prompt')
      .where('id', '=', runId)
      .executeTakeFirstOrThrow();
    assert.match(String(stored.prompt), /review of the GitHub pull request acme\/api#12 .* requested changes/);
    assert.match(String(stored.prompt), /untrusted context/);
    assert.doesNotMatch(String(stored.prompt), /README longer too/, 'the review stays out of the instructions');
    assert.doesNotMatch(String(stored.prompt), /feature-12/, "the branch name is the author's text: data only");
    assert.ok((await outputTexts(hangar, runId)).some((text) => text.includes('README longer too')));

    // One reply in the pull request's conversation, edited with the outcome.
    await github.until('the reply tells the outcome', () =>
      github.comments.some((comment) => comment.issue === 12 && comment.body.includes('SUCCEEDED')),
    );
    assert.equal(github.comments.filter((comment) => comment.issue === 12).length, 1);
    assert.equal(github.callsTo('POST', /^\/repos\/acme\/api\/issues\/12\/comments$/).length, 1);
    const found = await hangar.request(
      'GET',
      `/agent/run-by-external-reference?url=${encodeURIComponent(pullUrl(12))}`,
    );
    assert.equal(found.body.run_id, runId);
  });

  test('a review requesting changes on a pull request of the repository itself: the run checks out its branch and the pull request gets the commits', async () => {
    // Someone's pull request from a branch of acme/api, one commit ahead of main.
    const bare = path.join(stack.fixtures.root, 'acme', 'api');
    const work = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-gh-pr-'));
    const git = (...args: string[]) =>
      execFileSync('git', ['-c', 'user.name=Author', '-c', 'user.email=author@example.invalid', ...args], {
        cwd: work,
        encoding: 'utf8',
      }).trim();
    try {
      git('clone', '--quiet', bare, '.');
      git('checkout', '--quiet', '-b', 'fix-readme');
      fs.writeFileSync(path.join(work, 'feature.txt'), "the author's work\n");
      git('add', 'feature.txt');
      git('commit', '--quiet', '-m', "The author's commit");
      git('push', '--quiet', 'origin', 'fix-readme');
    } finally {
      fs.rmSync(work, { recursive: true, force: true });
    }
    const authorsTip = execFileSync('git', ['--git-dir', bare, 'rev-parse', 'fix-readme'], { encoding: 'utf8' }).trim();
    const number = github.pulls.length + 1;
    github.pulls.push({
      number,
      owner: 'acme',
      repo: 'api',
      title: 'Add a feature',
      body: 'Written by the author.',
      head: 'fix-readme',
      base: 'main',
      draft: false,
      state: 'open',
    });
    const pullsBefore = github.pulls.length;

    const review = reviewDelivery(number, {
      state: 'changes_requested',
      body: 'Please make the README longer.',
      head: 'fix-readme',
      headRepo: 'acme/api',
    });
    const delivered = await deliver(review, undefined, 'pull_request_review');
    assert.equal(delivered.body.runs.length, 1, JSON.stringify(delivered.body));
    const runId = delivered.body.runs[0];
    const run = await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR');
    assert.equal(run.state, 'SUCCEEDED', JSON.stringify(run.status_message));
    assert.deepEqual(run.agent_config?.github, { branch: 'fix-readme' });
    const stored = await hangar.db
      .selectFrom('runs')
      .select('prompt')
      .where('id', '=', runId)
      .executeTakeFirstOrThrow();
    assert.match(String(stored.prompt), /branch is checked out in the workspace/);
    assert.doesNotMatch(String(stored.prompt), /fix-readme/, "the branch name is the author's text: data only");

    // The branch now has the author's commit and, on top of it, the run's: a fast-forward, no new pull request.
    const show = (file: string) =>
      execFileSync('git', ['--git-dir', bare, 'show', `fix-readme:${file}`], { encoding: 'utf8' });
    assert.equal(show('feature.txt'), "the author's work\n");
    assert.match(show('README.md'), /one more line/);
    execFileSync('git', ['--git-dir', bare, 'merge-base', '--is-ancestor', authorsTip, 'fix-readme']);
    assert.equal(github.pulls.length, pullsBefore);
    const pull = github.pulls.find((each) => each.number === number)!;
    assert.equal(pull.body, 'Written by the author.', "the author's description stays");
    const events = (await hangar.request('GET', `/agent/runs/${runId}/timeline`)).body.events as any[];
    assert.ok(
      events.some((event) => event.event_type === 'github_pull_request_updated' && event.payload?.number === number),
      JSON.stringify(events.map((event) => event.event_type)),
    );
  });

  test("the App's replay keys are kept 7 days, then pruned; an event older than 6 days starts nothing", async () => {
    const body = commentDelivery(20, '@hangar please');
    const delivered = await deliver(body);
    assert.equal(delivered.body.runs.length, 1);
    // The delivery's key, one per run it started: the body's hash, the team and the trigger.
    const key = `${createHash('sha256').update(body).digest('hex')}:${hangar.teamUid}:built-in`;
    const keyRow = () =>
      hangar.db
        .selectFrom('webhook_replay_keys')
        .select(['expires_at'])
        .where('webhook_uid', '=', 'github-app')
        .where('replay_key', '=', key)
        .executeTakeFirst();
    const kept = await keyRow();
    assert.ok(kept?.expires_at, 'the key has an end');
    const days = (new Date(kept.expires_at).getTime() - Date.now()) / 86_400_000;
    assert.ok(days > 6.9 && days <= 7, `kept ${days} days`);

    // Past its end (the 7 days stood in for by moving the end), the retention pass drops it.
    await sql`UPDATE webhook_replay_keys SET expires_at = clock_timestamp() - interval '1 second'
      WHERE webhook_uid = 'github-app' AND replay_key = ${key}`.execute(hangar.db);
    assert.ok((await pruneReplayKeys(hangar.db)) >= 1);
    assert.equal(await keyRow(), undefined);

    // What keeps a capture from being replayed once its key is gone: GitHub's signed time of the event.
    const before = await runCount();
    const old = commentDelivery(21, '@hangar please', new Date(Date.now() - 6.5 * 86_400_000));
    const refused = await deliver(old);
    assert.equal(refused.status, 202);
    assert.deepEqual(refused.body.runs, []);
    assert.match(refused.body.ignored, /too old/);
    assert.equal(await runCount(), before);
    const oldKey = createHash('sha256').update(old).digest('hex');
    const oldKeys = await hangar.db
      .selectFrom('webhook_replay_keys')
      .select('replay_key')
      .where('replay_key', 'like', `${oldKey}%`)
      .execute();
    assert.deepEqual(oldKeys, []);
    await waitForState(hangar, delivered.body.runs[0], 'SUCCEEDED', 'FAILED', 'ERROR');
  });

  test("a delivery whose run fails to be created keeps no replay key: GitHub's redelivery starts the run", async () => {
    // A real refusal by the database while the run is inserted (a trigger on one thread's runs).
    await sql`CREATE FUNCTION test_refuse_run() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'the database refused the run'; END $$`.execute(hangar.db);
    await sql`CREATE TRIGGER test_refuse_run BEFORE INSERT ON runs FOR EACH ROW
      WHEN (NEW.title = 'acme/api#30') EXECUTE FUNCTION test_refuse_run()`.execute(hangar.db);
    const body = commentDelivery(30, '@hangar fix it');
    const before = await runCount();
    try {
      const failed = await deliver(body, undefined, 'issue_comment');
      assert.ok(failed.status >= 500, `${failed.status} ${JSON.stringify(failed.body)}`);
      assert.equal(await runCount(), before);
    } finally {
      await sql`DROP TRIGGER test_refuse_run ON runs`.execute(hangar.db);
      await sql`DROP FUNCTION test_refuse_run()`.execute(hangar.db);
    }
    const redelivered = await deliver(body, undefined, 'issue_comment');
    assert.equal(redelivered.status, 202, JSON.stringify(redelivered.body));
    assert.equal(redelivered.body.duplicate, false);
    assert.equal(redelivered.body.runs.length, 1);
    await waitForState(hangar, redelivered.body.runs[0], 'SUCCEEDED', 'FAILED', 'ERROR');
    const found = await hangar.request(
      'GET',
      `/agent/run-by-external-reference?url=${encodeURIComponent(issueUrl(30))}`,
    );
    assert.equal(found.body.run_id, redelivered.body.runs[0]);
  });

  // Last in the file: the test's address stays refused for a minute.
  test('a sender failing the signature again and again gets 429 with Retry-After, before its body is read', async () => {
    const body = commentDelivery(50, '@hangar please');
    const forged = await sign('another-secret-0123456789', body);
    let refused: Awaited<ReturnType<typeof deliver>> | undefined;
    let failures = 0;
    for (let i = 0; i < 20 && !refused; i++) {
      const answer = await deliver(body, forged);
      if (answer.status === 429) refused = answer;
      else {
        assert.equal(answer.status, 401);
        failures++;
      }
    }
    assert.ok(refused, 'the sender was stopped');
    assert.ok(failures <= 10, `${failures} failures before the limit (HANGAR_WEBHOOK_AUTH_FAILURES_PER_MINUTE, 10)`);
    assert.ok(Number(refused.headers.get('retry-after')) >= 1);
    // Even a rightly signed delivery from that sender waits now.
    const before = await runCount();
    assert.equal((await deliver(body)).status, 429);
    assert.equal(await runCount(), before);
  });
});
