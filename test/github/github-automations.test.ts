import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { hangarCli } from '../support/cli.js';
import { waitForState } from '../support/engine.js';
import {
  APP_WEBHOOK_SECRET,
  commentDelivery,
  deliver as deliverTo,
  pullUrl,
  reviewDelivery,
} from '../support/github-deliveries.js';
import type { GitHubServer } from '../support/github-server.js';
import { type GitHubStack, startGitHubStack } from '../support/github-stack.js';
import type { TestServer } from '../support/server.js';

// A team's choice of which GitHub events start what (issue 30): automations with a `github` trigger and a payload
// filter, made with the CLI, fed by signed deliveries of the App's webhook; the built-in triggers serve the teams
// without any.

let stack: GitHubStack;
let github: GitHubServer;
let hangar: TestServer;
let environmentId: string;
let automationId: string;
const SCRIPT_HARNESS = fileURLToPath(new URL('../support/script-harness.mjs', import.meta.url));
const worker = {
  command: [process.execPath, SCRIPT_HARNESS],
  timeout_minutes: 5,
  env: {
    SCRIPT_STEPS: JSON.stringify([{ sh: 'cd api && echo "reviewed" >> README.md' }, { done: 'Address the review' }]),
  },
};

before(async () => {
  stack = await startGitHubStack({
    repos: [{ owner: 'acme', repo: 'api' }],
    installations: [{ id: 7, account: 'acme', repos: ['acme/api'] }],
    link: [7],
    harnesses: { script: worker },
    env: { HANGAR_GITHUB_WEBHOOK_SECRET: APP_WEBHOOK_SECRET },
  });
  ({ github, hangar, environmentId } = stack);
});

after(async () => {
  await stack?.stop();
});

const review = (number: number, base = 'main') =>
  reviewDelivery(number, { state: 'changes_requested', body: `Rename the helper (${number}).`, base });
const deliverReview = (body: string, id?: string) => deliverTo(hangar, body, { event: 'pull_request_review', id });
const cli = (...args: string[]) => hangarCli(args, { url: hangar.url, apiKey: hangar.apiKey });

async function firings(): Promise<any[]> {
  const response = await hangar.request('GET', `/api/v1/factory/automations/${automationId}/firings`);
  assert.equal(response.status, 200, JSON.stringify(response.body));
  return response.body.firings;
}

async function replayKeyKept(body: string): Promise<boolean> {
  const key = createHash('sha256').update(body).digest('hex');
  const rows = await hangar.db
    .selectFrom('webhook_replay_keys')
    .select('replay_key')
    .where('replay_key', 'like', `${key}:%`)
    .execute();
  return rows.length > 0;
}

describe('GitHub automations', () => {
  test("a team's github automation decides: a review its filter takes starts the automation's run, shown in its history; the built-in mention no longer starts one", async () => {
    const created = await cli(
      'automations',
      'create',
      '--name',
      'reviews',
      '--prompt',
      'Address the review on the pull request.',
      '--github',
      'review',
      '--filter',
      '{"pull_request": {"base": {"ref": ["main"]}}}',
      '--json',
    );
    assert.equal(created.code, 0, created.stderr);
    const automation = JSON.parse(created.stdout);
    automationId = automation.id;
    assert.deepEqual(automation.triggers, [
      { provider: 'github', event: 'review', filter: { payload: { pull_request: { base: { ref: ['main'] } } } } },
    ]);

    // The team chose: its automation takes reviews only, so a mention (the built-in trigger) starts nothing.
    assert.deepEqual((await deliverTo(hangar, commentDelivery(1, '@hangar fix the README'))).body.runs, []);
    // The filter leaves out reviews of pull requests into another branch.
    assert.deepEqual((await deliverReview(review(40, 'release'))).body.runs, []);

    // A pull request of the repository itself: the run works on its branch.
    const delivered = await deliverReview(
      reviewDelivery(41, { state: 'changes_requested', body: 'Rename the helper (41).', headRepo: 'acme/api' }),
      'gh-delivery-41',
    );
    assert.equal(delivered.status, 202, JSON.stringify(delivered.body));
    assert.equal(delivered.body.runs.length, 1);
    const runId = delivered.body.runs[0];
    const run = await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR');
    assert.equal(run.state, 'SUCCEEDED', JSON.stringify(run.status_message));
    assert.equal(run.title, 'reviews: acme/api#41');
    // No environment in the automation: the team's environment naming the repository.
    assert.equal(run.agent_config?.environment_id, environmentId);
    assert.deepEqual(run.agent_config?.github, { branch: 'feature-41' });
    const stored = await hangar.db
      .selectFrom('runs')
      .select('prompt')
      .where('id', '=', runId)
      .executeTakeFirstOrThrow();
    assert.match(String(stored.prompt), /^Address the review on the pull request\.\n/);
    assert.match(String(stored.prompt), /acme\/api#41/);
    assert.match(String(stored.prompt), /untrusted context/);
    assert.doesNotMatch(String(stored.prompt), /Rename the helper/, 'the review stays out of the instructions');

    // Hangar replies in the pull request's thread as for the built-in triggers: one comment, edited at the end.
    await github.until('the reply tells the outcome', () =>
      github.comments.some((comment) => comment.issue === 41 && comment.body.includes('SUCCEEDED')),
    );
    assert.equal(github.comments.filter((comment) => comment.issue === 41).length, 1);
    const found = await hangar.request(
      'GET',
      `/agent/run-by-external-reference?url=${encodeURIComponent(pullUrl(41))}`,
    );
    assert.equal(found.body.run_id, runId);

    const history = await firings();
    assert.equal(history.length, 1);
    assert.deepEqual(
      { ...history[0], fired_at: undefined },
      {
        fired_at: undefined,
        source: 'github',
        delivery_id: 'gh-delivery-41',
        webhook_uid: null,
        github_event: 'review',
        run_id: runId,
        error: null,
      },
    );
    const shown = await cli('automations', 'history', automationId);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /github:review/);
    assert.match(shown.stdout, new RegExp(runId));
  });

  test("a run the automation cannot start is in its history and keeps no replay key: GitHub's redelivery starts it once fixed", async () => {
    const broken = await hangar.request('PUT', `/api/v1/factory/automations/${automationId}`, {
      body: { agent_config: { environment_id: 'no-such-environment' } },
    });
    assert.equal(broken.status, 200, JSON.stringify(broken.body));
    const body = review(42);
    const refused = await deliverReview(body);
    assert.equal(refused.status, 202, JSON.stringify(refused.body));
    assert.deepEqual(refused.body, { duplicate: false, runs: [] });
    const [latest] = await firings();
    assert.equal(latest.run_id, null);
    assert.match(latest.error, /environment/i);
    assert.equal(await replayKeyKept(body), false);

    const fixed = await hangar.request('PUT', `/api/v1/factory/automations/${automationId}`, {
      body: { agent_config: null },
    });
    assert.equal(fixed.status, 200);
    const redelivered = await deliverReview(body);
    assert.equal(redelivered.body.runs.length, 1, JSON.stringify(redelivered.body));
    assert.equal(await replayKeyKept(body), true);
    await waitForState(hangar, redelivered.body.runs[0], 'SUCCEEDED', 'FAILED', 'ERROR');
    assert.deepEqual((await deliverReview(body)).body, { duplicate: true, runs: [] });
  });

  test("one of two runs failing to start loses nothing: each run has its own replay key, so GitHub's redelivery starts only the one that did not", async () => {
    // A second automation taking the same reviews, broken for a real reason: its environment does not exist.
    const second = await hangar.request('POST', '/api/v1/factory/automations', {
      body: {
        name: 'reviews-too',
        prompt: 'Address the review as well.',
        triggers: [{ provider: 'github', event: 'review' }],
        agent_config: { environment_id: 'no-such-environment' },
      },
    });
    assert.equal(second.status, 201, JSON.stringify(second.body));
    try {
      const body = review(44);
      const first = await deliverReview(body);
      assert.equal(first.status, 202, JSON.stringify(first.body));
      assert.equal(first.body.runs.length, 1, 'the working automation started its run');
      const [refusedFiring] = (await hangar.request('GET', `/api/v1/factory/automations/${second.body.id}/firings`))
        .body.firings;
      assert.equal(refusedFiring.run_id, null);
      assert.match(refusedFiring.error, /environment/i);

      // Fixed, the redelivery of the same delivery starts the second automation's run, and not the first's again.
      const fixed = await hangar.request('PUT', `/api/v1/factory/automations/${second.body.id}`, {
        body: { agent_config: null },
      });
      assert.equal(fixed.status, 200);
      const redelivered = await deliverReview(body);
      assert.equal(redelivered.status, 202, JSON.stringify(redelivered.body));
      assert.equal(redelivered.body.duplicate, false);
      assert.equal(redelivered.body.runs.length, 1, JSON.stringify(redelivered.body));
      assert.notEqual(redelivered.body.runs[0], first.body.runs[0]);
      const run = await hangar.request('GET', `/agent/runs/${redelivered.body.runs[0]}`);
      assert.equal(run.body.title, 'reviews-too: acme/api#44');
      assert.deepEqual((await deliverReview(body)).body, { duplicate: true, runs: [] });
      for (const runId of [first.body.runs[0], redelivered.body.runs[0]])
        await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR');
    } finally {
      await hangar.request('DELETE', `/api/v1/factory/automations/${second.body.id}`);
    }
  });

  test('a disabled github automation still stands for the team: nothing starts; without any, the built-in triggers are back', async () => {
    const disabled = await cli('automations', 'disable', automationId);
    assert.equal(disabled.code, 0, disabled.stderr);
    assert.deepEqual((await deliverReview(review(43))).body.runs, []);
    assert.deepEqual((await deliverTo(hangar, commentDelivery(2, '@hangar fix the README'))).body.runs, []);

    assert.equal((await hangar.request('DELETE', `/api/v1/factory/automations/${automationId}`)).status, 204);
    const mention = await deliverTo(hangar, commentDelivery(3, '@hangar fix the README'));
    assert.equal(mention.body.runs.length, 1);
    const run = await waitForState(hangar, mention.body.runs[0], 'SUCCEEDED', 'FAILED', 'ERROR');
    assert.equal(run.title, 'acme/api#3');
  });

  test('a github trigger takes only mention, label or review, and a filter in the filter language', async () => {
    const bad = (trigger: unknown) =>
      hangar.request('POST', '/api/v1/factory/automations', {
        body: { name: `bad-${Math.random()}`, prompt: 'x', triggers: [trigger] },
      });
    assert.equal((await bad({ provider: 'github', event: 'push' })).status, 400);
    const badFilter = await bad({
      provider: 'github',
      event: 'label',
      filter: { payload: { label: { name: { in: 5 } } } },
    });
    assert.equal(badFilter.status, 400, JSON.stringify(badFilter.body));
    assert.match(badFilter.body.detail, /triggers\[0\]\.filter/);
    const cliBad = await cli('automations', 'create', '--name', 'x', '--prompt', 'x', '--github', 'push');
    assert.notEqual(cliBad.code, 0);
    assert.match(cliBad.stderr, /--github takes mention, label, review/);
  });
});
