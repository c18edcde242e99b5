import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { REFUSAL_REPLIES } from '../../src/github/index.js';
import { hangarCli } from '../support/cli.js';
import { waitForState } from '../support/engine.js';
import {
  APP_WEBHOOK_SECRET,
  commentDelivery,
  deliver as deliverTo,
  labelDelivery,
  reviewDelivery,
} from '../support/github-deliveries.js';
import type { GitHubServer } from '../support/github-server.js';
import { type GitHubStack, startGitHubStack } from '../support/github-stack.js';
import type { TestServer } from '../support/server.js';

// Issue 47, finding 1: any GitHub user's `@hangar` comment (author_association NONE) on a repository of a linked
// installation started a run as the environment's creator, with a token that writes to the repository. Each attack
// here is a signed delivery of the App's webhook to a real server, GitHub being the REST double (collaborators'
// permissions, comments) and the run the command harness.

let stack: GitHubStack;
let github: GitHubServer;
let hangar: TestServer;
let environmentId: string;
const started: string[] = [];
const SCRIPT_HARNESS = fileURLToPath(new URL('../support/script-harness.mjs', import.meta.url));
const worker = {
  command: [process.execPath, SCRIPT_HARNESS],
  timeout_minutes: 5,
  env: { SCRIPT_STEPS: JSON.stringify([{ sh: 'cd api && echo "asked" >> README.md' }, { done: 'Done as asked' }]) },
};

before(async () => {
  stack = await startGitHubStack({
    repos: [{ owner: 'acme', repo: 'api' }],
    installations: [{ id: 7, account: 'acme', repos: ['acme/api'] }],
    link: [7],
    harnesses: { script: worker },
    collaborators: {
      writer: 'write',
      maintainer: 'maintain',
      'second-writer': 'write',
      reader: 'read',
      triager: 'triage',
    },
    env: {
      HANGAR_GITHUB_WEBHOOK_SECRET: APP_WEBHOOK_SECRET,
      HANGAR_GITHUB_LABEL: 'hangar-fix',
      HANGAR_GITHUB_RUNS_PER_HOUR_PER_USER: '2',
      HANGAR_GITHUB_RUNS_PER_HOUR_PER_REPOSITORY: '3',
    },
  });
  ({ github, hangar, environmentId } = stack);
});

after(async () => {
  try {
    for (const runId of started) await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED');
  } finally {
    await stack?.stop();
  }
});

const comment = (number: number, login: string, association: string, text = '@hangar please push this change') =>
  deliverTo(hangar, commentDelivery(number, `${text} (${Math.random()})`, new Date(), { login, association }));

async function runCount(): Promise<number> {
  return (await hangar.db.selectFrom('runs').select('id').execute()).length;
}

const repliesOn = (issue: number) => github.comments.filter((each) => each.owner === 'acme' && each.issue === issue);
const permissionAsked = (login: string) =>
  github.callsTo('GET', new RegExp(`^/repos/acme/api/collaborators/${login}/permission$`)).length;

async function serviceIdentity(): Promise<string> {
  const links = await hangar.request('GET', `/api/v1/admin/teams/${hangar.teamUid}/github`);
  const link = links.body.links.find((each: any) => each.installation_id === 7);
  assert.ok(link?.service_user_uid, JSON.stringify(links.body));
  return link.service_user_uid;
}

/** The one run a delivery started, as the API shows it (with its `id`). */
async function startedRun(answer: Awaited<ReturnType<typeof comment>>): Promise<any> {
  assert.equal(answer.status, 202, JSON.stringify(answer.body));
  assert.equal(answer.body.runs.length, 1, JSON.stringify(answer.body));
  const id = answer.body.runs[0];
  started.push(id);
  const run = await hangar.request('GET', `/agent/runs/${id}`);
  assert.equal(run.status, 200);
  return { ...run.body, id };
}

/** The hour of the runs started so far has passed (their starts moved back, as the clock would move them). */
const hourPasses = () =>
  sql`UPDATE github_trigger_starts SET started_at = started_at - interval '2 hours'`.execute(hangar.db);

describe('who may start runs from GitHub', () => {
  // Each test starts with the limits' hour fresh (this file's limits are small: 2 per user, 3 per repository).
  beforeEach(hourPasses);

  test("an outsider's comment (author_association NONE, no permission) starts nothing and is answered once, however many follow", async () => {
    const before = await runCount();
    const first = await comment(60, 'outsider', 'NONE');
    assert.equal(first.status, 202, JSON.stringify(first.body));
    assert.deepEqual(first.body.runs, []);
    assert.equal(await runCount(), before, 'no run');
    assert.equal(permissionAsked('outsider'), 1, "GitHub was asked for the commenter's permission");

    // One answer in the thread, saying what to do and nothing about the team, its environment or why beyond that.
    await github.until('the refusal is answered', () => repliesOn(60).length === 1);
    const [reply] = repliesOn(60);
    assert.equal(reply!.body, REFUSAL_REPLIES.access);
    assert.match(reply!.body, /write access/);
    const team = await hangar.db
      .selectFrom('teams')
      .select('name')
      .where('uid', '=', hangar.teamUid)
      .executeTakeFirstOrThrow();
    for (const secret of [hangar.teamUid, team.name, environmentId, hangar.userUid, 'outsider'])
      assert.ok(!reply!.body.includes(secret), `the reply names ${secret}`);

    // A flood of comments in the thread: still nothing started, and no second answer.
    for (let i = 0; i < 3; i++) assert.deepEqual((await comment(60, 'outsider', 'NONE')).body.runs, []);
    assert.equal(repliesOn(60).length, 1, 'one answer per commenter and thread');
    assert.equal(github.callsTo('POST', /^\/repos\/acme\/api\/issues\/60\/comments$/).length, 1);
    assert.equal(await runCount(), before);

    // Another thread gets its own one answer.
    assert.deepEqual((await comment(61, 'outsider', 'NONE')).body.runs, []);
    assert.equal(repliesOn(61).length, 1);
    assert.equal(await runCount(), before);
  });

  test("a read-only collaborator whose comment claims MEMBER is refused: GitHub's permission decides, not author_association", async () => {
    const before = await runCount();
    const asked = permissionAsked('reader');
    const read = await comment(62, 'reader', 'MEMBER');
    assert.deepEqual(read.body.runs, [], JSON.stringify(read.body));
    assert.equal(permissionAsked('reader'), asked + 1);
    // Triage lets someone label issues on GitHub; it is not write access.
    assert.deepEqual((await comment(63, 'triager', 'OWNER')).body.runs, []);
    assert.equal(await runCount(), before);
    await github.until('both are answered', () => repliesOn(62).length === 1 && repliesOn(63).length === 1);
    assert.equal(repliesOn(62)[0]!.body, REFUSAL_REPLIES.access);
  });

  test("a collaborator with write access starts the run, created as the link's service identity, not as the environment's creator", async () => {
    // Even when the delivery claims no association: the permission GitHub answers is what counts, both ways.
    const run = await startedRun(await comment(64, 'writer', 'NONE'));
    const service = await serviceIdentity();
    assert.equal(run.creator.uid, service);
    assert.notEqual(run.creator.uid, hangar.userUid, "the environment's creator (an admin) is not the creator");
    assert.match(run.creator.display_name ?? '', /GitHub acme \(installation 7\)/);
    assert.equal(run.agent_config?.environment_id, environmentId);
    // The service identity is a principal of its own: no membership of the team, so no role and no grants.
    const member = await hangar.db
      .selectFrom('team_members')
      .select('role')
      .where('user_uid', '=', service)
      .executeTakeFirst();
    assert.equal(member, undefined);
    const keys = await hangar.db.selectFrom('api_keys').select('uid').where('user_uid', '=', service).execute();
    assert.deepEqual(keys, []);
    const finished = await waitForState(hangar, run.id, 'SUCCEEDED', 'FAILED', 'ERROR');
    assert.equal(finished.state, 'SUCCEEDED', JSON.stringify(finished.status_message));

    // maintain is write access too (GitHub's legacy permission says write); the same service identity.
    const maintained = await startedRun(await comment(65, 'maintainer', 'MEMBER'));
    assert.equal(maintained.creator.uid, service);
  });

  test("a login on the link's allow-list starts runs without write access, as the team member it maps to; the list is admin-only and audited", async () => {
    const member = await hangar.addUser(hangar.teamUid, 'member');
    const path = `/api/v1/admin/teams/${hangar.teamUid}/github/installations/7/allowed-logins/Mapped-Dev`;
    // Not an instance administrator: refused.
    assert.equal(
      (await hangar.request('PUT', path, { apiKey: member.apiKey, body: { user_uid: member.userUid } })).status,
      403,
    );
    // Someone outside the team is not a user its runs may be made as.
    const stranger = await hangar.createTeamWithUser({ teamName: 'elsewhere' });
    assert.equal((await hangar.request('PUT', path, { body: { user_uid: stranger.userUid } })).status, 400);
    assert.equal(
      (
        await hangar.request('PUT', `${path.replace('Mapped-Dev', 'not%20a%20login')}`, {
          body: { user_uid: member.userUid },
        })
      ).status,
      400,
    );

    // Before it is listed, the login (no permission on GitHub) is refused.
    assert.deepEqual((await comment(66, 'mapped-dev', 'CONTRIBUTOR')).body.runs, []);

    const allowed = await hangar.request('PUT', path, { body: { user_uid: member.userUid } });
    assert.equal(allowed.status, 200, JSON.stringify(allowed.body));
    const link = allowed.body.links.find((each: any) => each.installation_id === 7);
    assert.deepEqual(
      link.allowed_logins.map((each: any) => [each.login, each.user_uid]),
      [['mapped-dev', member.userUid]],
    );
    const audited = await hangar.db
      .selectFrom('audit_log')
      .select(['action', 'target', 'team_uid', 'actor_uid'])
      .where('action', 'like', 'github.allowed_login.%')
      .execute();
    assert.deepEqual(audited, [
      { action: 'github.allowed_login.set', target: 'Mapped-Dev', team_uid: hangar.teamUid, actor_uid: hangar.userUid },
    ]);

    // Listed: the login's comment (any case) starts a run created as the member.
    const run = await startedRun(await comment(67, 'MAPPED-dev', 'NONE'));
    assert.equal(run.creator.uid, member.userUid);

    // Taken off the list (with the CLI): refused again (and told, in a new thread).
    const removed = await hangarCli(
      ['github', 'disallow', hangar.teamUid, '--installation', '7', '--login', 'Mapped-Dev', '--json'],
      { url: hangar.url, apiKey: hangar.apiKey },
    );
    assert.equal(removed.code, 0, removed.stderr);
    assert.deepEqual(JSON.parse(removed.stdout).links[0].allowed_logins, []);
    assert.deepEqual((await comment(68, 'mapped-dev', 'NONE')).body.runs, []);
    await github.until('the refusal is answered', () => repliesOn(68).length === 1);
    assert.equal((await hangar.request('DELETE', path)).status, 404);
  });

  test('a label added by an outsider starts nothing; by a collaborator with write access it starts the run', async () => {
    const before = await runCount();
    const outsider = await deliverTo(hangar, labelDelivery(70, 'hangar-fix', 'outsider'), { event: 'issues' });
    assert.equal(outsider.status, 202);
    assert.deepEqual(outsider.body.runs, []);
    assert.equal(await runCount(), before);
    await github.until('the refusal is answered', () => repliesOn(70).length === 1);
    // Someone who may label (triage) but not write: nothing either.
    assert.deepEqual(
      (await deliverTo(hangar, labelDelivery(71, 'hangar-fix', 'triager'), { event: 'issues' })).body.runs,
      [],
    );
    assert.equal(await runCount(), before);
    const run = await startedRun(
      await deliverTo(hangar, labelDelivery(72, 'hangar-fix', 'second-writer'), { event: 'issues' }),
    );
    assert.equal(run.creator.uid, await serviceIdentity());
  });

  test("a review requesting changes: a write collaborator's on a fork's pull request starts the run; an outsider's starts nothing", async () => {
    const review = (number: number, login: string) =>
      deliverTo(
        hangar,
        reviewDelivery(number, {
          state: 'changes_requested',
          body: 'Please change it.',
          login,
          headRepo: 'someone/api',
        }),
        { event: 'pull_request_review' },
      );
    const before = await runCount();
    assert.deepEqual((await review(80, 'outsider')).body.runs, []);
    assert.equal(await runCount(), before);
    const run = await startedRun(await review(81, 'maintainer'));
    assert.equal(run.agent_config?.github, undefined, "a fork's branch is not pushed to");
  });

  test('an hourly limit per GitHub user and per repository: past it nothing starts and the thread is told once', async () => {
    // Per user (2 in this file's settings): writer's third request in the hour starts nothing.
    await startedRun(await comment(90, 'writer', 'COLLABORATOR'));
    await startedRun(await comment(91, 'writer', 'COLLABORATOR'));
    const before = await runCount();
    const limited = await comment(92, 'writer', 'COLLABORATOR');
    assert.equal(limited.status, 202);
    assert.deepEqual(limited.body.runs, []);
    assert.match(limited.body.ignored, /too many/);
    assert.equal(await runCount(), before);
    await github.until('the limit is told', () => repliesOn(92).length === 1);
    assert.equal(repliesOn(92)[0]!.body, REFUSAL_REPLIES.rate);
    assert.deepEqual((await comment(92, 'writer', 'COLLABORATOR')).body.runs, []);
    assert.equal(repliesOn(92).length, 1, 'told once');

    // Per repository (3): a third person's start fits, the fourth request, from a fourth person, does not.
    await startedRun(await comment(93, 'second-writer', 'COLLABORATOR'));
    const body = commentDelivery(94, '@hangar one more', new Date(), { login: 'maintainer' });
    const full = await deliverTo(hangar, body);
    assert.deepEqual(full.body.runs, []);
    assert.equal(await runCount(), before + 1);
    await github.until('the limit is told', () => repliesOn(94).length === 1);
    // A refused delivery keeps no replay key: once the hour has passed, GitHub's redelivery starts its run.
    await hourPasses();
    await startedRun(await deliverTo(hangar, body));
  });

  // Last in the file: a github automation makes the team's own choice, so the built-in triggers stop serving it.
  test('a run needs its creator to be able to use its secrets: the service identity has no grant, the mapped member its own', async () => {
    const secret = await hangar.request('POST', '/api/v1/secrets', {
      body: { name: 'DEPLOY_KEY', value: 'deploy-0123' },
    });
    assert.equal(secret.status, 201, JSON.stringify(secret.body));
    // An automation an admin saved, naming a secret the admin may use: before, its runs were the admin's.
    const automation = await hangar.request('POST', '/api/v1/factory/automations', {
      body: {
        name: 'mentions',
        prompt: 'Do what the thread asks.',
        triggers: [{ provider: 'github', event: 'mention' }],
        agent_config: { harness_auth_secrets: { claude_auth_secret_name: 'DEPLOY_KEY' } },
      },
    });
    assert.equal(automation.status, 201, JSON.stringify(automation.body));

    // A write collaborator mapped to no one: the service identity may not use DEPLOY_KEY, so nothing starts.
    const before = await runCount();
    const refused = await comment(100, 'writer', 'COLLABORATOR');
    assert.equal(refused.status, 202, JSON.stringify(refused.body));
    assert.deepEqual(refused.body.runs, []);
    assert.equal(await runCount(), before);
    const firings = await hangar.request('GET', `/api/v1/factory/automations/${automation.body.id}/firings`);
    assert.match(firings.body.firings[0].error, /DEPLOY_KEY/);

    // A login mapped to a member who was granted DEPLOY_KEY: the run starts, as that member.
    const member = await hangar.addUser(hangar.teamUid, 'member');
    const grant = await hangar.request('POST', '/api/v1/secrets/DEPLOY_KEY/grants', {
      body: { grantee_type: 'member', grantee_uid: member.userUid },
    });
    assert.ok([200, 201].includes(grant.status), JSON.stringify(grant.body));
    const allowed = await hangar.request(
      'PUT',
      `/api/v1/admin/teams/${hangar.teamUid}/github/installations/7/allowed-logins/writer`,
      { body: { user_uid: member.userUid } },
    );
    assert.equal(allowed.status, 200, JSON.stringify(allowed.body));
    const run = await startedRun(await comment(101, 'writer', 'COLLABORATOR'));
    assert.equal(run.creator.uid, member.userUid);
  });
});
