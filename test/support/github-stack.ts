import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { harnessEnv } from './engine.js';
import { GitFixtures } from './git.js';
import { GitHttpServer } from './git-http.js';
import { COMMENTER, REVIEWER } from './github-deliveries.js';
import { type CollaboratorRole, GitHubServer, testAppKey } from './github-server.js';
import { startTestServer, type TestServer } from './server.js';

/**
 * The GitHub tests' common set-up: bare repositories served by a real git smart-HTTP server, the GitHub REST
 * server holding them and the App's installations, the App's key on disk, and Hangar configured as that App, with
 * an environment naming the first repository. What a file needs beyond that (another repository, a linked
 * installation, the webhook secret, its own harnesses) is an option.
 */

export interface GitHubStackOptions {
  /** Repositories (each with a README), on GitHub and in git. The first is the environment's. */
  repos: Array<{ owner: string; repo: string }>;
  installations: Array<{ id: number; account: string; repos: string[] }>;
  /** Installations the default team links before the test starts (by the admin API). */
  link?: number[];
  /** The harnesses beside the test ones (harnessEnv's `extra`). */
  harnesses?: Record<string, unknown>;
  /** More server settings (HANGAR_GITHUB_WEBHOOK_SECRET, HANGAR_GITHUB_LABEL, ...). */
  env?: Record<string, string>;
  /** Every line the server logs (with HANGAR_LOG_LEVEL in `env`): for tests that look for a token in them. */
  logs?: (line: string) => void;
  /** false: no default environment (a file making its own); environmentId is then empty. */
  environment?: boolean;
  /**
   * Collaborators of every repository, by login: who may start runs from GitHub. By default the deliveries'
   * commenter and reviewer (github-deliveries.ts) have write access; anyone else has none.
   */
  collaborators?: Record<string, CollaboratorRole>;
}

export interface GitHubStack {
  fixtures: GitFixtures;
  git: GitHttpServer;
  github: GitHubServer;
  hangar: TestServer;
  /** The environment naming the first repository ('' with `environment: false`). */
  environmentId: string;
  stop(): Promise<void>;
}

export const TEST_APP_ID = 4242;

export async function startGitHubStack(options: GitHubStackOptions): Promise<GitHubStack> {
  const key = testAppKey();
  const fixtures = new GitFixtures();
  const keyDirectory = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-gh-key-'));
  let git: GitHttpServer | undefined;
  let github: GitHubServer | undefined;
  let hangar: TestServer | undefined;
  const stop = async () => {
    await hangar?.stop();
    await git?.close();
    await github?.close();
    fixtures.remove();
    fs.rmSync(keyDirectory, { recursive: true, force: true });
  };
  try {
    for (const { owner, repo } of options.repos) fixtures.createRepo(owner, repo, { 'README.md': `# ${repo}\n` });
    // The REST server names clone URLs on the git server and the git server asks it which token may do what.
    const started = await GitHubServer.start({
      appId: TEST_APP_ID,
      publicKey: key.publicKey,
      gitBaseUrl: () => git!.baseUrl,
    });
    github = started;
    git = await GitHttpServer.start(fixtures.root, (password, owner, repo, write) =>
      started.allows(password, owner, repo, write),
    );
    for (const { owner, repo } of options.repos) {
      github.addRepo(owner, repo);
      const collaborators = options.collaborators ?? { [COMMENTER]: 'write', [REVIEWER]: 'write' };
      for (const [login, role] of Object.entries(collaborators)) github.setCollaborator(owner, repo, login, role);
    }
    for (const { id, account, repos } of options.installations) github.addInstallation(id, account, repos);
    const keyFile = path.join(keyDirectory, 'app.pem');
    fs.writeFileSync(keyFile, key.privateKeyPem, { mode: 0o600 });
    hangar = await startTestServer(
      harnessEnv(options.harnesses ?? {}, {
        HANGAR_GIT_BASE_URL: git.baseUrl,
        HANGAR_GITHUB_APP_ID: String(TEST_APP_ID),
        HANGAR_GITHUB_APP_PRIVATE_KEY_FILE: keyFile,
        HANGAR_GITHUB_API_URL: github.baseUrl,
        ...options.env,
      }),
      options.logs ? { logs: options.logs } : {},
    );
    for (const id of options.link ?? []) {
      const linked = await hangar.request('PUT', `/api/v1/admin/teams/${hangar.teamUid}/github/installations/${id}`);
      assert.equal(linked.status, 200, JSON.stringify(linked.body));
    }
    if (options.environment === false) return { fixtures, git, github, hangar, environmentId: '', stop };
    const first = options.repos[0]!;
    const created = await hangar.request('POST', '/api/v1/environments', {
      body: { name: first.repo, github_repos: [{ owner: first.owner, repo: first.repo }] },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    return { fixtures, git, github, hangar, environmentId: created.body.uid, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * Gives a team a personal access token the GitHub double accepts for `repos`: kept as the team secret GITHUB_PAT
 * (made with `apiKey`, a key of that team's) and linked as the team's token secret by an instance administrator.
 */
export async function linkPersonalToken(
  stack: GitHubStack,
  team: { teamUid: string; apiKey?: string },
  token: string,
  repos: string[],
): Promise<void> {
  const { hangar, github } = stack;
  github.addPersonalToken(token, repos);
  const secret = await hangar.request('POST', '/api/v1/secrets', {
    body: { name: 'GITHUB_PAT', value: token },
    ...(team.apiKey ? { apiKey: team.apiKey } : {}),
  });
  assert.equal(secret.status, 201, JSON.stringify(secret.body));
  const linked = await hangar.request('PUT', `/api/v1/admin/teams/${team.teamUid}/github/token-secret`, {
    body: { secret_name: 'GITHUB_PAT' },
  });
  assert.equal(linked.status, 200, JSON.stringify(linked.body));
}
