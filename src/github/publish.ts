import type { PublishRequest, PublishResult, RepoCredential, RunGitHub } from './access.js';
import { GitHubRefusal, refusalOf, restClient } from './app-client.js';
import { PublishRepository } from './push.js';

/** Where a publication goes: GitHub's REST API and its git (`${gitBaseUrl}/${owner}/${repo}`). */
export interface GitHubTarget {
  apiUrl: string;
  gitBaseUrl: string;
}

/**
 * One execution's access made of its credentials: publication with the credential of the repository, and at the
 * end the revocation of the installation tokens (a personal access token is the team's and stays). The server's
 * engine and a self-hosted worker (whose tokens the server minted for it) publish the same way.
 */
export function tokenAccess(target: GitHubTarget, credentials: RepoCredential[], runUrl: string): RunGitHub {
  return {
    credentials,
    runUrl,
    publish: (request) => {
      const credential = credentials.find(
        (c) =>
          c.owner.toLowerCase() === request.owner.toLowerCase() && c.repo.toLowerCase() === request.repo.toLowerCase(),
      );
      if (!credential)
        throw new GitHubRefusal(`no GitHub credential covers ${request.owner}/${request.repo}`, undefined);
      return publishPullRequest(target, credential.token, request);
    },
    close: () =>
      revokeTokens(
        target.apiUrl,
        credentials.filter((c) => c.source === 'installation').map((c) => c.token),
      ),
  };
}

/**
 * Installation tokens end with the execution (GitHub would keep them an hour); a failure (already revoked, GitHub
 * unreachable) leaves that hour. Each distinct token once.
 */
export async function revokeTokens(apiUrl: string, tokens: string[]): Promise<void> {
  await Promise.all(
    [...new Set(tokens)].map((token) =>
      restClient(apiUrl, token)
        .request('DELETE /installation/token')
        .catch(() => undefined),
    ),
  );
}

/** Begins the line of a pull request's description that says which Hangar run made it (set by the execution). */
export const HANGAR_MARK = 'Made by Hangar run';

/**
 * Publishes the bundle's HEAD: pushed to `branch` from a bare repository of this process's own (see
 * PublishRepository), then the branch's open pull request updated, or a new one opened against the default branch.
 * Nothing to publish when the bundle has no commit that the default branch or the branch lacks.
 */
export async function publishPullRequest(
  target: GitHubTarget,
  token: string,
  request: PublishRequest,
): Promise<PublishResult> {
  const { owner, repo, branch } = request;
  const rest = restClient(target.apiUrl, token);
  let defaultBranch: string;
  try {
    defaultBranch = (await rest.repos.get({ owner, repo })).data.default_branch;
  } catch (error) {
    throw refusalOf(error, `reading ${owner}/${repo}`);
  }
  const url = `${target.gitBaseUrl}/${owner}/${repo}`;
  const local = await PublishRepository.create(token);
  let commit: string;
  try {
    commit = await local.takeBundle(request.bundle);
    await local.fetchBranch(url, defaultBranch, 'base');
    const branchExists = await local.fetchBranch(url, branch, 'branch');
    // Changes are commits the default branch does not have and the branch does not have yet.
    const ahead = await local.commitsAhead('refs/remotes/base');
    if (ahead === 0 || (branchExists && (await local.commitsAhead('refs/remotes/branch')) === 0))
      return { status: 'no_changes' };
    await local.push(url, branch);
  } finally {
    await local.remove();
  }
  try {
    const open = await rest.pulls.list({ owner, repo, head: `${owner}:${branch}`, state: 'open' });
    const existing = open.data[0];
    if (existing) {
      // The description of a pull request someone else wrote (a review's run pushes to its branch) stays theirs.
      if (existing.body?.includes(HANGAR_MARK))
        await rest.pulls.update({ owner, repo, pull_number: existing.number, body: request.body });
      return { status: 'published', url: existing.html_url, number: existing.number, created: false, commit, branch };
    }
    const created = await rest.pulls.create({
      owner,
      repo,
      head: branch,
      base: defaultBranch,
      title: request.title,
      body: request.body,
      draft: request.draft,
    });
    return {
      status: 'published',
      url: created.data.html_url,
      number: created.data.number,
      created: true,
      commit,
      branch,
    };
  } catch (error) {
    throw refusalOf(error, `opening the pull request of ${owner}/${repo}`);
  }
}
