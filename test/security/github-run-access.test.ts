import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { eventually, harnessEnv, outputTexts, script, waitForState } from '../support/engine.js';
import { type GitHubStack, linkPersonalToken, startGitHubStack } from '../support/github-stack.js';
import { stopChild } from '../support/processes.js';
import { createRun } from '../support/runs.js';
import { startWorker, type WorkerProcess, waitForConnections } from '../support/workers.js';

// Issue 47, findings 4, 7 and 9, attacked for real: a real git smart-HTTP server, the GitHub double, Hangar as the
// App. The process sandbox, so that the agent's own git reaches the git server on this host's loopback.
//  4. The team's personal access token is a team secret like any other: a run whose creator may not use it does
//     not get it, and a run that may gets it through a credential helper over the API, never in a file.
//  7. What Hangar publishes (the pull request's title and description, the commit message) is redacted.
//  9. Hangar's comment in a GitHub thread links only a pull request Hangar published on that repository.

const PAT = 'github_pat_SECURITY0123456789abcdefghijkl';
let stack: GitHubStack;
let member: { userUid: string; apiKey: string };
let patEnvironment: string;
// The agents wait for this file before their last steps (the process sandbox sees the host's /tmp).
const signals = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-gh-signals-'));
// The run user (not this process's) writes there.
fs.chmodSync(signals, 0o777);

/** Until the agent touched `file`; a run that ended first fails the test with its outcome. */
async function agentReached(runId: string, file: string): Promise<void> {
  await eventually(
    `the agent of ${runId} touched ${path.basename(file)}`,
    async () => {
      if (fs.existsSync(file)) return true;
      const run = (await stack.hangar.request('GET', `/api/v1/agent/runs/${runId}`)).body;
      if (['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED'].includes(run.state))
        throw new Error(`the run ended first: ${run.state} ${JSON.stringify(run.status_message)}`);
      return false;
    },
    60_000,
  );
}

before(async () => {
  stack = await startGitHubStack({
    repos: [
      { owner: 'acme', repo: 'api' },
      { owner: 'other', repo: 'svc' },
    ],
    installations: [{ id: 7, account: 'acme', repos: ['acme/api'] }],
    link: [7],
    env: { HANGAR_SANDBOX: 'process' },
  });
  const { hangar } = stack;
  await linkPersonalToken(stack, { teamUid: hangar.teamUid }, PAT, ['other/svc']);
  const environment = await hangar.request('POST', '/api/v1/environments', {
    body: { name: 'svc with the PAT', github_repos: [{ owner: 'other', repo: 'svc' }] },
  });
  assert.equal(environment.status, 201, JSON.stringify(environment.body));
  patEnvironment = environment.body.uid;
  member = await hangar.addUser(hangar.teamUid, 'member');
});

after(async () => {
  await stack?.stop();
  fs.rmSync(signals, { recursive: true, force: true });
});

/** Every file under `directory` that holds `needle` (the workspace's HOME and clones included). */
function filesHolding(directory: string, needle: string): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile() && fs.readFileSync(full).includes(needle)) found.push(full);
    }
  };
  walk(directory);
  return found;
}

/** A shell step asking git's configured helpers for the credential of owner/repo on the git server. */
function credentialFill(repo: string): string {
  const host = new URL(stack.git.baseUrl).host;
  return `printf 'protocol=http\\nhost=${host}\\npath=${repo}\\n\\n' | GIT_TERMINAL_PROMPT=0 git credential fill 2>&1; echo "fill:$?"`;
}

function remoteLog(owner: string, repo: string, ref: string, format: string): string {
  return execFileSync(
    'git',
    ['--git-dir', path.join(stack.fixtures.root, owner, repo), 'log', '-1', `--format=${format}`, ref],
    { encoding: 'utf8' },
  );
}

describe("the team's GitHub personal access token", () => {
  test('a member without a grant on its secret can neither start a run in its repositories nor steer one that has it (403)', async () => {
    const { hangar } = stack;
    // The attack: without the fix the token was in the run's ~/.git-credentials, and `rev` defeats the redaction.
    const peek = script({ sh: 'rev "$HOME/.git-credentials"; cat "$HOME"/.hangar-git/* | rev' }, { done: 'looked' });
    const refused = await hangar.request('POST', '/api/v1/agent/runs', {
      body: { prompt: peek, config: { environment_id: patEnvironment } },
      apiKey: member.apiKey,
    });
    assert.equal(refused.status, 403, JSON.stringify(refused.body));
    assert.match(refused.body.detail, /GITHUB_PAT.*not granted/);
    // A follow-up steers a harness that may ask for the token: its author needs the same right.
    const adminRun = await createRun(hangar, {
      prompt: script({ done: 'nothing to do' }),
      config: { environment_id: patEnvironment, github: { pull_request: 'off' } },
    });
    assert.equal((await waitForState(hangar, adminRun, 'SUCCEEDED', 'FAILED', 'ERROR')).state, 'SUCCEEDED');
    const steered = await hangar.request('POST', `/api/v1/agent/runs/${adminRun}/followups`, {
      body: { message: peek },
      apiKey: member.apiKey,
    });
    assert.equal(steered.status, 403, JSON.stringify(steered.body));
    assert.match(steered.body.detail, /GITHUB_PAT/);
  });

  test('a run that may use it clones, fetches and pushes through the credential helper; the token is in no file of the workspace', async () => {
    const { hangar, git } = stack;
    const workspaceRoot = hangar.workspaceDir;
    const pushed = path.join(signals, 'pushed');
    const ready = path.join(signals, 'scanned');
    const runId = await createRun(hangar, {
      prompt: script(
        { sh: 'cd svc && git fetch origin 2>&1 && echo "fetched:$?"' },
        {
          sh: 'cd svc && echo agent > agent.txt && git add agent.txt && git -c user.name=a -c user.email=a@b commit -qm agent && git push -q origin HEAD:refs/heads/agent-push 2>&1; echo "pushed:$?"',
        },
        { sh: `touch ${pushed}; while [ ! -e ${ready} ]; do sleep 0.05; done` },
        { done: 'Pushed by the agent' },
      ),
      config: { environment_id: patEnvironment, github: { pull_request: 'off' } },
    });
    // While the agent waits, after its git used the token: no file of its workspace (HOME, clone, helper) has it.
    await agentReached(runId, pushed);
    const held = filesHolding(workspaceRoot, PAT);
    fs.writeFileSync(ready, '');
    const run = await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR');
    assert.equal(run.state, 'SUCCEEDED', JSON.stringify(run.status_message));
    assert.deepEqual(held, [], 'the token is written nowhere in the workspace');
    const texts = await outputTexts(hangar, runId);
    assert.ok(texts.includes('fetched:0\n'), texts.join('\n'));
    assert.ok(texts.includes('pushed:0\n'), texts.join('\n'));
    assert.equal(remoteLog('other', 'svc', 'agent-push', '%s').trim(), 'agent');
    assert.ok(
      git.requests.some((r) => r.service === 'git-receive-pack' && r.path.startsWith('/other/svc') && r.status === 200),
    );
  });

  test('the helper answers only while the run lives, for its own repositories, while its creator may use the secret', async () => {
    const { hangar } = stack;
    const grant = await hangar.request('POST', '/api/v1/secrets/GITHUB_PAT/grants', {
      body: { grantee_type: 'member', grantee_uid: member.userUid },
    });
    assert.equal(grant.status, 201, JSON.stringify(grant.body));
    const asked = path.join(signals, 'asked');
    const revoked = path.join(signals, 'revoked');
    const runId = await createRun(
      hangar,
      {
        prompt: script(
          { token: true },
          { sh: credentialFill('other/svc') },
          { sh: credentialFill('other/not-given') },
          { sh: `touch ${asked}; while [ ! -e ${revoked} ]; do sleep 0.05; done` },
          { sh: credentialFill('other/svc') },
          { done: 'asked' },
        ),
        config: { environment_id: patEnvironment, github: { pull_request: 'off' } },
      },
      member.apiKey,
    );
    await agentReached(runId, asked);
    // The admin takes the grant back while the run goes on: its next ask is refused.
    const revoke = await hangar.request('DELETE', `/api/v1/secrets/GITHUB_PAT/grants/member/${member.userUid}`);
    assert.equal(revoke.status, 204);
    fs.writeFileSync(revoked, '');
    const run = await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR');
    assert.equal(run.state, 'SUCCEEDED', JSON.stringify(run.status_message));
    const texts = await outputTexts(hangar, runId);
    const [granted, notGiven, afterRevoke] = texts.filter((text) => text.includes('fill:'));
    // Granted: the token (redacted in the transcript, as every value the run was given).
    assert.match(granted!, /password=\[REDACTED:GITHUB_TOKEN\]/);
    assert.match(notGiven!, /this run was not given the repository other\/not-given/);
    assert.doesNotMatch(notGiven!, /password=/);
    assert.match(afterRevoke!, /GITHUB_PAT" is not granted to this run's creator/);
    assert.doesNotMatch(afterRevoke!, /password=/);

    // Once the run has ended its task token gets nothing.
    const taskToken = texts.find((text) => text.startsWith('token:'))!.slice('token:'.length);
    const ended = await fetch(`${hangar.apiUrl}/harness-support/git-credential`, {
      method: 'POST',
      headers: { authorization: `Bearer ${taskToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ protocol: 'http', host: new URL(stack.git.baseUrl).host, path: 'other/svc' }),
    });
    assert.equal(ended.status, 401);
    assert.ok(!(await ended.text()).includes(PAT));
  });
});

describe("the team's GitHub personal access token on a self-hosted worker", () => {
  let worker: WorkerProcess | undefined;
  after(async () => {
    if (!worker) return;
    await stopChild(worker.child, 'SIGKILL');
    fs.rmSync(worker.dataDir, { recursive: true, force: true });
  });

  test("the server sends it to the worker only for a run that may use it as it sets up; the worker's harness asks the server for it", async () => {
    const { hangar } = stack;
    // Created with a grant, which is withdrawn before the run executes (its worker is not there yet): the grant is
    // reckoned when the execution sets up, and the server sends the worker no token.
    const grant = await hangar.request('POST', '/api/v1/secrets/GITHUB_PAT/grants', {
      body: { grantee_type: 'member', grantee_uid: member.userUid },
    });
    assert.equal(grant.status, 201, JSON.stringify(grant.body));
    const refused = await createRun(
      hangar,
      {
        prompt: script({ sh: 'rev "$HOME/.git-credentials"' }, { done: 'looked' }),
        config: { environment_id: patEnvironment, worker_host: 'pat-box' },
      },
      member.apiKey,
    );
    const revoke = await hangar.request('DELETE', `/api/v1/secrets/GITHUB_PAT/grants/member/${member.userUid}`);
    assert.equal(revoke.status, 204);
    worker = startWorker(hangar, 'pat-box', {
      env: harnessEnv({}, { HANGAR_GIT_BASE_URL: stack.git.baseUrl, HANGAR_SANDBOX: 'process' }),
    });
    await waitForConnections(hangar, 'pat-box', 1);
    const failed = await waitForState(hangar, refused, 'SUCCEEDED', 'FAILED', 'ERROR');
    assert.equal(failed.state, 'FAILED', JSON.stringify(failed.status_message));
    assert.equal(failed.status_message.error_code, 'environment_setup_failed');
    assert.match(failed.status_message.message, /GITHUB_PAT" is not granted to this run's creator/);
    assert.ok(!JSON.stringify(await hangar.request('GET', `/api/v1/agent/runs/${refused}/timeline`)).includes(PAT));

    const allowed = await createRun(hangar, {
      prompt: script(
        { sh: credentialFill('other/svc') },
        { sh: `grep -rlF '${PAT}' "$HOME" . ; echo "files-with-token:$?"` },
        { done: 'asked' },
      ),
      config: { environment_id: patEnvironment, worker_host: 'pat-box', github: { pull_request: 'off' } },
    });
    const run = await waitForState(hangar, allowed, 'SUCCEEDED', 'FAILED', 'ERROR');
    assert.equal(run.state, 'SUCCEEDED', JSON.stringify(run.status_message));
    const texts = await outputTexts(hangar, allowed);
    assert.ok(
      texts.some((text) => /password=\[REDACTED:GITHUB_TOKEN\]/.test(text)),
      texts.join('\n'),
    );
    // grep's status 1: no file of the worker's workspace holds it.
    assert.ok(texts.includes('files-with-token:1\n'), texts.join('\n'));
  });
});

describe('what Hangar publishes on GitHub', () => {
  test("a secret value in the agent's summary is redacted in the pull request's title, description and commit message", async () => {
    const { hangar, github } = stack;
    const runId = await createRun(hangar, {
      prompt: script(
        { sh: 'cd svc && echo fix > fix.txt' },
        { done: `Use ${PAT} for the deploy\n\nThe deploy now reads ${PAT}.` },
      ),
      config: { environment_id: patEnvironment },
    });
    const run = await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR');
    assert.equal(run.state, 'SUCCEEDED', JSON.stringify(run.status_message));
    const pull = github.pulls.find((candidate) => candidate.head === `hangar/${runId}`);
    assert.ok(pull, 'the pull request was opened');
    assert.equal(pull.title, 'Use [REDACTED:GITHUB_TOKEN] for the deploy');
    assert.ok(!pull.body.includes(PAT), pull.body);
    assert.match(pull.body, /The deploy now reads \[REDACTED:GITHUB_TOKEN\]\./);
    const message = remoteLog('other', 'svc', `hangar/${runId}`, '%B');
    assert.ok(!message.includes(PAT), message);
    assert.match(message, /^Use \[REDACTED:GITHUB_TOKEN\] for the deploy/);
    const sent = github.callsTo('POST', /\/repos\/other\/svc\/pulls$/).map((call) => JSON.stringify(call.body));
    assert.ok(sent.length > 0 && sent.every((body) => !body.includes(PAT)));
  });

  test('the thread comment links only the pull request Hangar published on that repository, never one the run reported', async () => {
    const { hangar, github } = stack;
    const evil = {
      type: 'artifact',
      artifact_type: 'PULL_REQUEST',
      data: { url: 'https://evil.example/acme/api/pull/1' },
    };
    const env = await hangar.request('POST', '/api/v1/environments', {
      body: { name: 'api', github_repos: [{ owner: 'acme', repo: 'api' }] },
    });
    assert.equal(env.status, 201);
    // One run reports the evil address and changes nothing (Hangar opens no pull request); another reports it
    // and changes a file (Hangar opens one).
    const quiet = await createRun(hangar, {
      prompt: script({ emit: evil }, { done: 'Nothing to change' }),
      config: { environment_id: env.body.uid },
    });
    const busy = await createRun(hangar, {
      prompt: script({ sh: 'cd api && echo x > x.txt' }, { emit: evil }, { done: 'Add x' }),
      config: { environment_id: env.body.uid },
    });
    // Each run as if a GitHub thread started it: Hangar's start comment, recorded for the outcome to be told.
    let commentId = 90_000;
    for (const runId of [quiet, busy]) {
      commentId += 1;
      github.comments.push({ id: commentId, owner: 'acme', repo: 'api', issue: 5, body: 'Hangar started a run' });
      await hangar.db
        .insertInto('github_thread_replies')
        .values({ run_id: runId, installation_id: 7, owner: 'acme', repo: 'api', comment_id: commentId })
        .execute();
    }
    for (const runId of [quiet, busy]) {
      const run = await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR');
      assert.equal(run.state, 'SUCCEEDED', JSON.stringify(run.status_message));
      assert.ok(
        run.artifacts.some((a: any) => a.data?.url === evil.data.url),
        'the run did report the address',
      );
    }
    const bodyOf = (id: number) => github.comments.find((comment) => comment.id === id)!.body;
    await github.until('both outcomes were told', () => [90_001, 90_002].every((id) => bodyOf(id).includes('ended')));
    assert.doesNotMatch(bodyOf(90_001), /evil\.example|Pull request:/);
    const opened = github.pulls.find((pull) => pull.head === `hangar/${busy}`)!;
    assert.equal(bodyOf(90_002).includes(`Pull request: ${github.baseUrl}/acme/api/pull/${opened.number}`), true);
    assert.doesNotMatch(bodyOf(90_002), /evil\.example/);
  });
});
