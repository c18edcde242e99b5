/** What an execution gets from the GitHub slice: its repositories' tokens, publication, the end of its tokens. */

export interface RepoName {
  owner: string;
  repo: string;
}

/** A token for one repository the run clones (an installation token limited to the run's repositories, or a PAT). */
export interface RepoCredential extends RepoName {
  token: string;
  /** `installation` tokens expire with the execution; a personal access token is the team's and stays. */
  source: 'installation' | 'personal_access_token';
}

export interface PublishRequest extends RepoName {
  /** `git bundle` of the workspace's HEAD, made in the run's sandbox. */
  bundle: Buffer;
  branch: string;
  draft: boolean;
  title: string;
  body: string;
}

export type PublishResult =
  | { status: 'no_changes' }
  | { status: 'published'; url: string; number: number; created: boolean; commit: string; branch: string };

/** One execution's GitHub access: made before its clones, closed (tokens revoked) when it ends. */
export interface RunGitHub {
  credentials: RepoCredential[];
  /** The run's page, linked from its pull request. */
  runUrl: string;
  /** Pushes the bundle's HEAD to `branch` and opens its pull request, or updates the open one. Throws with GitHub's reason. */
  publish(request: PublishRequest): Promise<PublishResult>;
  close(): Promise<void>;
}

/** The execution a GitHub access is for. */
export interface ExecutionRef {
  runId: string;
  executionId: number;
}

export interface GitHubAccess {
  /**
   * The tokens for an execution of the team's run cloning `repos` (none for a repository no link covers: it is
   * cloned as before). Throws a GitHubRefusal with GitHub's reason when a link covers them but GitHub refuses a token.
   */
  open(teamUid: string, repos: RepoName[], execution: ExecutionRef): Promise<RunGitHub>;
}
