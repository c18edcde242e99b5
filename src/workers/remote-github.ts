import {
  type ExecutionRef,
  type GitHubAccess,
  GitHubRefusal,
  type RepoName,
  type RunGitHub,
  tokenAccess,
} from '../github/index.js';
import type { GitHubAccessReply } from './github-tokens.js';
import type { WorkerLink } from './link.js';

/**
 * A worker's GitHub access: its execution's tokens come from the server (`task_github_access`), minted there for the
 * run's repositories with the App's key, which never leaves the server. With them the execution clones, gives its
 * harness git access, and publishes as a server's engine does: the bundle made in the sandbox, pushed by this
 * process's own git to `gitBaseUrl`, the pull request opened with the token. At its end the worker revokes them
 * (the server does too, when the end reaches it).
 */
export class RemoteGitHub implements GitHubAccess {
  constructor(
    private readonly link: WorkerLink,
    /** Where this worker clones from and pushes to (its HANGAR_GIT_BASE_URL, the same GitHub as the server's). */
    private readonly gitBaseUrl: string,
  ) {}

  async open(_teamUid: string, _repos: RepoName[], execution: ExecutionRef): Promise<RunGitHub> {
    const reply = (await this.link.call('task_github_access', {
      task_id: execution.runId,
      execution_id: execution.executionId,
    })) as GitHubAccessReply;
    if (!reply.held) throw new Error("the run is no longer this worker's");
    if ('refused' in reply) throw new GitHubRefusal(reply.refused, undefined);
    return tokenAccess({ apiUrl: reply.api_url, gitBaseUrl: this.gitBaseUrl }, reply.credentials, reply.run_url);
  }
}
