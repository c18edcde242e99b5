import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { BASE_IMAGE, testEngines } from '../support/container-engines.js';
import { outputTexts, script, waitForState } from '../support/engine.js';
import { type GitHubStack, linkPersonalToken, startGitHubStack } from '../support/github-stack.js';
import { createRun } from '../support/runs.js';

// Issue 47.4 in a container: the harness's git credential helper finds a node in the image's container (Hangar's
// own, /opt/hangar/bin/node), its files at the container's path of the workspace, and the server through the API
// relay on the container's loopback, without network. The base image has no git: the helper is run as git runs it
// (`!snippet` + the action, in a shell).

const { engines, skipReason } = testEngines();
const PAT = 'github_pat_CONTAINER0123456789abcdefghij';

describe('the git credential helper in a container', { skip: skipReason }, () => {
  let stack: GitHubStack;
  before(async () => {
    const engine = engines[0]!;
    stack = await startGitHubStack({
      repos: [
        { owner: 'acme', repo: 'api' },
        { owner: 'other', repo: 'svc' },
      ],
      installations: [{ id: 7, account: 'acme', repos: ['acme/api'] }],
      link: [7],
      environment: false,
      env: {
        HANGAR_SANDBOX: 'container',
        DOCKER_HOST: engine.dockerHost,
        HANGAR_DEFAULT_IMAGE: BASE_IMAGE,
        HANGAR_SETUP_NETWORK: 'false',
      },
    });
    await linkPersonalToken(stack, { teamUid: stack.hangar.teamUid }, PAT, ['other/svc']);
  });
  after(() => stack?.stop());

  test('an installation repository is answered from the execution file, a PAT one by the server', async () => {
    const { hangar, git } = stack;
    const environment = await hangar.request('POST', '/api/v1/environments', {
      body: {
        name: 'both',
        github_repos: [
          { owner: 'acme', repo: 'api' },
          { owner: 'other', repo: 'svc' },
        ],
      },
    });
    assert.equal(environment.status, 201, JSON.stringify(environment.body));
    const host = new URL(git.baseUrl).host;
    const ask = (repo: string) =>
      `printf 'protocol=http\\nhost=${host}\\npath=${repo}\\n' | (eval "\${GIT_CONFIG_VALUE_1#!} get") 2>&1; echo "asked:${repo}"`;
    const runId = await createRun(hangar, {
      prompt: script({ sh: ask('acme/api') }, { sh: ask('other/svc') }, { done: 'asked' }),
      config: { environment_id: environment.body.uid, github: { pull_request: 'off' } },
    });
    const run = await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR');
    assert.equal(run.state, 'SUCCEEDED', JSON.stringify(run.status_message));
    const texts = await outputTexts(hangar, runId);
    const answer = (repo: string) => texts.find((text) => text.includes(`asked:${repo}`)) ?? texts.join('\n');
    assert.match(answer('acme/api'), /username=x-access-token\npassword=\[REDACTED:GITHUB_TOKEN\]/);
    assert.match(answer('other/svc'), /username=x-access-token\npassword=\[REDACTED:GITHUB_TOKEN\]/);
    assert.ok(!JSON.stringify(texts).includes(PAT));
  });
});
