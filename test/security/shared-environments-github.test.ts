import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { getRun, script, waitForStateAs } from '../support/engine.js';
import { type GitHubStack, linkPersonalToken, startGitHubStack } from '../support/github-stack.js';

// Issue 47 finding 6, the GitHub side: a guest team's GitHub tokens are its secrets too. Team A's environment names
// a repository that team B's linked installation covers; in B's run there, A's setup (and whatever it planted) could
// ask git's credential helper for B's token. Without B's admin's consent the run gets none; with it, it does. The
// process sandbox, so that the agent's git reaches the git server on this host's loopback.
let stack: GitHubStack;
let guest: { teamUid: string; apiKey: string };
/** Team A's environment naming other/svc, which only team B's personal access token covers. */
let patEnvironment: string;
const PAT = 'github_pat_GUESTTEAM0123456789abcdefghijkl';
// The agent waits for the test here (the process sandbox sees the host's /tmp); the run user writes there.
const signals = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-guest-signals-'));
fs.chmodSync(signals, 0o777);

before(async () => {
  stack = await startGitHubStack({
    repos: [
      { owner: 'acme', repo: 'api' },
      { owner: 'other', repo: 'svc' },
    ],
    installations: [{ id: 7, account: 'acme', repos: ['acme/api'] }],
    env: { HANGAR_SANDBOX: 'process' },
  });
  const { hangar, environmentId } = stack;
  guest = await hangar.createTeamWithUser({ teamName: 'guest-github' });
  const linked = await hangar.request('PUT', `/api/v1/admin/teams/${guest.teamUid}/github/installations/7`);
  assert.equal(linked.status, 200, JSON.stringify(linked.body));
  const shared = await hangar.request('POST', `/api/v1/environments/${environmentId}/guests`, {
    body: { team_uid: guest.teamUid },
  });
  assert.equal(shared.status, 200, JSON.stringify(shared.body));
  await linkPersonalToken(stack, guest, PAT, ['other/svc']);
  const created = await hangar.request('POST', '/api/v1/environments', {
    body: { name: 'svc', github_repos: [{ owner: 'other', repo: 'svc' }] },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  patEnvironment = created.body.uid;
  const sharedPat = await hangar.request('POST', `/api/v1/environments/${patEnvironment}/guests`, {
    body: { team_uid: guest.teamUid },
  });
  assert.equal(sharedPat.status, 200, JSON.stringify(sharedPat.body));
});

after(async () => {
  await stack?.stop();
  fs.rmSync(signals, { recursive: true, force: true });
});

/** The run (as the guest sees it) once it has ended; bounded by the test's timeout. */
function ended(runId: string): Promise<any> {
  return waitForStateAs(stack.hangar, guest.apiKey, runId, 'SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED');
}

/** B's run in A's environment asks git's helpers for the repository's credential; what it printed. */
async function askForToken(): Promise<{ runId: string; state: string; output: string }> {
  const host = new URL(stack.git.baseUrl).host;
  const fill = `printf 'protocol=http\\nhost=${host}\\npath=acme/api\\n\\n' | GIT_TERMINAL_PROMPT=0 git credential fill 2>&1; echo "fill:$?"`;
  const created = await stack.hangar.request('POST', '/agent/runs', {
    body: {
      prompt: script({ sh: fill }, { done: 'asked' }),
      config: { environment_id: stack.environmentId, github: { pull_request: 'off' } },
    },
    apiKey: guest.apiKey,
  });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  const run = await ended(created.body.run_id);
  const link = await fetch(`${stack.hangar.apiUrl}/agent/runs/${created.body.run_id}/transcript`, {
    headers: { authorization: `Bearer ${guest.apiKey}` },
    redirect: 'manual',
  });
  const output = link.status === 302 ? await (await fetch(link.headers.get('location')!)).text() : '';
  return { runId: created.body.run_id, state: run.state, output: `${JSON.stringify(run.status_message)}\n${output}` };
}

test("a guest team's GitHub token goes into its run in another team's environment only with its admin's consent", async () => {
  // Without consent no token is minted for the run: the private repository cannot even be cloned, and the timeline
  // says why. Without the fix the run got the token from the helper (the second run below).
  const without = await askForToken();
  assert.equal(without.state, 'FAILED', without.output);
  assert.match(without.output, /environment_setup_failed/);
  assert.doesNotMatch(without.output, /password=/);
  const timeline = await stack.hangar.request('GET', `/api/v1/agent/runs/${without.runId}/timeline`, {
    apiKey: guest.apiKey,
  });
  assert.match(JSON.stringify(timeline.body), /github_token_withheld/);

  const trust = `/api/v1/environments/${stack.environmentId}/trust`;
  assert.equal((await stack.hangar.request('POST', trust, { apiKey: guest.apiKey })).status, 200);
  const allowed = await askForToken();
  assert.equal(allowed.state, 'SUCCEEDED', allowed.output);
  // The token itself is redacted in what the run wrote; that a helper answered is what counts here.
  assert.match(allowed.output, /password=\[REDACTED:GITHUB_TOKEN\]/);
});

test("the team's personal access token: a guest's run needing it is refused without consent, and its helper stops answering once the consent goes", async () => {
  const { hangar } = stack;
  const host = new URL(stack.git.baseUrl).host;
  const trust = `/api/v1/environments/${patEnvironment}/trust`;
  const waiting = path.join(signals, 'waiting');
  const go = path.join(signals, 'go');
  const body = {
    prompt: script(
      { sh: `touch ${waiting}; while [ ! -e ${go} ]; do sleep 0.05; done` },
      {
        sh: `printf 'protocol=http\\nhost=${host}\\npath=other/svc\\n\\n' | GIT_TERMINAL_PROMPT=0 git credential fill 2>&1; echo "fill:$?"`,
      },
      { done: 'asked' },
    ),
    config: { environment_id: patEnvironment, github: { pull_request: 'off' } },
  };
  // The environment's repository needs the team's token secret: without consent the run is refused.
  const refused = await hangar.request('POST', '/agent/runs', { body, apiKey: guest.apiKey });
  assert.equal(refused.status, 403, JSON.stringify(refused.body));
  assert.match(refused.body.detail, /GITHUB_PAT/);

  // With it the run clones with the token; taken back while the run's agent is running, the helper that serves the
  // token (to whatever in the sandbox holds the run's task token) refuses it.
  assert.equal((await hangar.request('POST', trust, { apiKey: guest.apiKey })).status, 200);
  const created = await hangar.request('POST', '/agent/runs', { body, apiKey: guest.apiKey });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  // A file the run's agent writes: no event tells of it (the run's state is read to fail early if it ended).
  while (!fs.existsSync(waiting)) {
    const run = await getRun(hangar, created.body.run_id, guest.apiKey);
    if (['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED'].includes(run.state))
      assert.fail(`the run ended first: ${JSON.stringify(run.status_message)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.equal((await hangar.request('DELETE', trust, { apiKey: guest.apiKey })).status, 204);
  fs.writeFileSync(go, '');
  const run = await ended(created.body.run_id);
  assert.equal(run.state, 'SUCCEEDED', JSON.stringify(run.status_message));
  const link = await fetch(`${hangar.apiUrl}/agent/runs/${created.body.run_id}/transcript`, {
    headers: { authorization: `Bearer ${guest.apiKey}` },
    redirect: 'manual',
  });
  const output = await (await fetch(link.headers.get('location')!)).text();
  assert.doesNotMatch(output, /password=/, output);
  assert.match(output, /fill:128/);
});
