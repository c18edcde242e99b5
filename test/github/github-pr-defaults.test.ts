import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { browserMissing, ensureDashboardBuilt, launchBrowser, openPage, signIn } from '../support/browser.js';
import { hangarCli } from '../support/cli.js';
import { script, waitForState } from '../support/engine.js';
import type { GitFixtures } from '../support/git.js';
import type { GitHubServer } from '../support/github-server.js';
import { type GitHubStack, startGitHubStack } from '../support/github-stack.js';
import { createRun } from '../support/runs.js';
import type { TestServer } from '../support/server.js';

// An environment's default pull-request mode (issue 30): `github.pull_request` on the environment, which a run's own
// `config.github.pull_request` overrides. Real git smart-HTTP and GitHub REST servers, as in github.test.ts.

let stack: GitHubStack;
let fixtures: GitFixtures;
let github: GitHubServer;
let hangar: TestServer;
/** Every line the server logged (at debug level): no GitHub token may be in one. */
const serverLogs: string[] = [];

before(async () => {
  stack = await startGitHubStack({
    repos: [{ owner: 'acme', repo: 'api' }],
    installations: [{ id: 7, account: 'acme', repos: ['acme/api'] }],
    link: [7],
    // Each test makes the environments it compares.
    environment: false,
    env: {
      HANGAR_LOG_LEVEL: 'debug',
      // Setup snapshots on: a run reading its repositories with its own token must never leave one.
      HANGAR_SNAPSHOT_TTL: '24h',
    },
    logs: (line) => serverLogs.push(line),
  });
  ({ fixtures, github, hangar } = stack);
});

after(async () => {
  await stack?.stop();
});

async function environment(name: string, github?: Record<string, unknown>): Promise<string> {
  const created = await hangar.request('POST', '/api/v1/environments', {
    body: { name, github_repos: [{ owner: 'acme', repo: 'api' }], ...(github ? { github } : {}) },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  return created.body.uid;
}

/** A run of the environment that adds a line to the README and ends SUCCEEDED; the run's own `github` config when given. */
async function succeededRun(environmentId: string, runGitHub?: Record<string, unknown>): Promise<any> {
  const runId = await createRun(hangar, {
    prompt: script({ sh: 'cd api && echo "one more line" >> README.md' }, { done: 'Add a line' }),
    config: { environment_id: environmentId, ...(runGitHub ? { github: runGitHub } : {}) },
  });
  const run = await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR');
  assert.equal(run.state, 'SUCCEEDED', JSON.stringify(run.status_message));
  assert.equal(run.status_message?.message, 'Add a line', 'published without a note of failure');
  return run;
}

function branchExists(branch: string): boolean {
  const refs = execFileSync('git', ['--git-dir', path.join(fixtures.root, 'acme', 'api'), 'branch', '--list', branch], {
    encoding: 'utf8',
  });
  return refs.trim() !== '';
}

describe("an environment's default pull-request mode", () => {
  test('is stored, listed and validated; a PUT without it drops it', async () => {
    const uid = await environment('drafts', { pull_request: 'draft' });
    const listed = await hangar.request('GET', '/agent/environments');
    const item = listed.body.environments.find((environment: any) => environment.uid === uid);
    assert.deepEqual(item.config.github, { pull_request: 'draft' });
    for (const github of [{ pull_request: 'closed' }, { pull_request: 'open', extra: true }]) {
      const refused = await hangar.request('POST', '/api/v1/environments', {
        body: { name: 'bad', github },
      });
      assert.equal(refused.status, 400, JSON.stringify(github));
    }
    const replaced = await hangar.request('PUT', `/api/v1/environments/${uid}`, {
      body: { name: 'drafts no more', github_repos: [{ owner: 'acme', repo: 'api' }] },
    });
    assert.equal(replaced.status, 200, JSON.stringify(replaced.body));
    assert.equal(replaced.body.config.github, undefined);
    assert.equal((await hangar.request('DELETE', `/api/v1/environments/${uid}`)).status, 204);
  });

  test("a run with no mode of its own takes the environment's draft; a run's own mode wins over it", async () => {
    const drafts = await environment('draft by default', { pull_request: 'draft' });
    const byDefault = await succeededRun(drafts);
    assert.equal(github.pulls.find((pull) => pull.head === `hangar/${byDefault.run_id}`)?.draft, true);
    const ownMode = await succeededRun(drafts, { pull_request: 'open' });
    assert.equal(github.pulls.find((pull) => pull.head === `hangar/${ownMode.run_id}`)?.draft, false);
  });

  test('an environment that says off pushes nothing, unless the run asks for a pull request', async () => {
    const off = await environment('no pull requests', { pull_request: 'off' });
    const left = await succeededRun(off);
    assert.equal(branchExists(`hangar/${left.run_id}`), false, 'nothing was pushed');
    assert.ok(!github.pulls.some((pull) => pull.head === `hangar/${left.run_id}`));
    assert.equal(left.artifacts.length, 0);
    const asked = await succeededRun(off, { pull_request: 'draft' });
    assert.equal(github.pulls.find((pull) => pull.head === `hangar/${asked.run_id}`)?.draft, true);
    assert.ok(asked.artifacts.some((artifact: any) => artifact.artifact_type === 'PULL_REQUEST'));
  });

  test('an environment without a mode opens pull requests, as before', async () => {
    const plain = await environment('plain');
    const run = await succeededRun(plain);
    assert.equal(github.pulls.find((pull) => pull.head === `hangar/${run.run_id}`)?.draft, false);
  });

  test('hangar environments create and update take --pull-request', async () => {
    const cli = (args: string[]) => hangarCli(args, { url: hangar.url, apiKey: hangar.apiKey });
    const created = await cli([
      'environments',
      'create',
      '--name',
      'CLI drafts',
      '--repo',
      'acme/api',
      '--pull-request',
      'draft',
      '--json',
    ]);
    assert.equal(created.code, 0, created.stderr);
    const uid = JSON.parse(created.stdout).uid;
    assert.deepEqual(JSON.parse(created.stdout).config.github, { pull_request: 'draft' });
    const updated = await cli(['environments', 'update', uid, '--name', 'CLI off', '--pull-request', 'OFF', '--json']);
    assert.equal(updated.code, 0, updated.stderr);
    assert.deepEqual(JSON.parse(updated.stdout).config.github, { pull_request: 'off' });
    const refused = await cli(['environments', 'create', '--name', 'x', '--pull-request', 'closed']);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /--pull-request takes one of open, draft, off; got "closed"/);
  });

  test("the dashboard's environment form sets it, and the card says it", { skip: browserMissing }, async () => {
    await ensureDashboardBuilt();
    const browser = await launchBrowser();
    try {
      const { page, problems } = await openPage(browser, hangar.url);
      await signIn(page, hangar.apiKey);
      await page
        .getByRole('navigation', { name: 'Main' })
        .getByRole('link', { name: 'Environments', exact: true })
        .click();
      await page.getByRole('button', { name: 'New environment' }).click();
      const form = page.getByRole('form', { name: 'New environment' });
      await form.getByLabel('Name').fill('Dashboard drafts');
      await form.getByLabel(/Repositories/).fill('acme/api');
      await form.getByLabel(/Pull requests/).selectOption('draft');
      await form.getByRole('button', { name: 'Create environment' }).click();
      const card = page.getByRole('listitem').filter({ has: page.getByRole('heading', { name: 'Dashboard drafts' }) });
      await card.getByText('opened as drafts').waitFor();
      const listed = await hangar.request('GET', '/agent/environments');
      const item = listed.body.environments.find((environment: any) => environment.config.name === 'Dashboard drafts');
      assert.deepEqual(item.config.github, { pull_request: 'draft' });
      assert.deepEqual(problems, []);
    } finally {
      await browser.close();
    }
  });

  test('no setup snapshot is taken of a workspace cloned with a token, and no token is kept on disk', async () => {
    const listed = await hangar.request('GET', '/agent/environments');
    const withRepos = listed.body.environments.filter((item: any) => item.config.github_repos.length > 0);
    assert.ok(withRepos.length >= 4);
    for (const item of withRepos) assert.equal(item.snapshot, undefined, `${item.config.name} has a snapshot`);
    for (const token of github.tokens.keys()) {
      // grep answers 1 when it finds nothing (2 on an error, which fails the test too).
      const found = spawnSync('grep', ['-rlF', token, hangar.dataDir], { encoding: 'utf8' });
      assert.equal(found.status, 1, `a token is in ${found.stdout}${found.stderr}`);
    }
  });

  test("no line the server logged carries an execution's token", () => {
    const tokens = [...github.tokens.keys()];
    assert.ok(tokens.length >= 5, 'the runs above had tokens');
    const logged = serverLogs.join('');
    assert.ok(serverLogs.length > 0, 'the lines were captured');
    for (const token of tokens) assert.ok(!logged.includes(token), 'a token is in a log line');
  });
});
