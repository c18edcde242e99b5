import type { Kysely } from 'kysely';
import type { DB } from '../database.js';
import { integrationNotConfigured, invalidRequest, notFound, upstreamUnreachable } from '../platform/http/errors.js';
import type { ExecutionRef, GitHubAccess, RepoCredential, RepoName, RunGitHub } from './access.js';
import { GitHubAppClient, GitHubRefusal, refusalOf, restClient } from './app-client.js';
import { type GitHubTarget, tokenAccess } from './publish.js';
import * as store from './store.js';
import { endedReplies, markTold, recordReply } from './thread-replies.js';

export interface GitHubServiceOptions {
  db: Kysely<DB>;
  /** The operator's App; undefined: installations cannot be linked, personal access tokens still work. */
  app: { appId: number; privateKey: string } | undefined;
  apiUrl: string;
  /** Where repositories are cloned and pushed: `${gitBaseUrl}/${owner}/${repo}` (HANGAR_GIT_BASE_URL). */
  gitBaseUrl: string;
  readSecret: (teamUid: string, name: string) => Promise<string | null>;
  runUrl: (runId: string) => string;
}

export interface LinkView {
  installation_id?: number;
  account?: string;
  token_secret?: string;
  created_at: string;
}

/** GitHub for a team: its links (App installations, a PAT secret), and each execution's tokens and pull requests. */
export class GitHubService implements GitHubAccess {
  private readonly app: GitHubAppClient | undefined;

  constructor(private readonly options: GitHubServiceOptions) {
    this.app = options.app ? new GitHubAppClient({ ...options.app, baseUrl: options.apiUrl }) : undefined;
  }

  async links(teamUid: string): Promise<{ links: LinkView[] }> {
    const rows = await store.links(this.options.db, teamUid);
    return {
      links: rows.map((row) => ({
        ...(row.installation_id !== null ? { installation_id: row.installation_id, account: row.account_login! } : {}),
        ...(row.token_secret !== null ? { token_secret: row.token_secret } : {}),
        created_at: row.created_at.toISOString(),
      })),
    };
  }

  /** Links an installation after asking GitHub whose it is (so a wrong ID is refused now, not at a run). */
  async linkInstallation(teamUid: string, installationId: number): Promise<{ links: LinkView[] }> {
    if (!this.app)
      throw integrationNotConfigured(
        'No GitHub App is configured on this server (HANGAR_GITHUB_APP_ID, HANGAR_GITHUB_APP_PRIVATE_KEY_FILE)',
      );
    let account: string;
    try {
      account = await this.app.installationAccount(installationId);
    } catch (error) {
      if (error instanceof GitHubRefusal && error.status === 404)
        throw notFound(`GitHub does not know installation ${installationId} of this App`);
      throw upstreamUnreachable((error as Error).message);
    }
    await store.linkInstallation(this.options.db, teamUid, installationId, account);
    return this.links(teamUid);
  }

  async unlinkInstallation(teamUid: string, installationId: number): Promise<{ links: LinkView[] }> {
    if (!(await store.unlinkInstallation(this.options.db, teamUid, installationId)))
      throw notFound(`installation ${installationId} is not linked to this team`);
    return this.links(teamUid);
  }

  /** The team secret holding a fine-grained personal access token, used for repositories no installation covers. */
  async setTokenSecret(teamUid: string, secretName: string): Promise<{ links: LinkView[] }> {
    if ((await this.options.readSecret(teamUid, secretName)) === null)
      throw invalidRequest(`the team has no secret named "${secretName}"`);
    await store.setTokenSecret(this.options.db, teamUid, secretName);
    return this.links(teamUid);
  }

  async clearTokenSecret(teamUid: string): Promise<{ links: LinkView[] }> {
    if (!(await store.clearTokenSecret(this.options.db, teamUid))) throw notFound('the team has no token secret');
    return this.links(teamUid);
  }

  runUrl(runId: string): string {
    return this.options.runUrl(runId);
  }

  /**
   * Says in the thread that a run started (a link to it); the comment is edited with the outcome when the run ends
   * (tellOutcomes). Uses a token of the installation limited to the repository, revoked at once.
   */
  async replyStarted(thread: {
    installationId: number;
    owner: string;
    repo: string;
    number: number;
    runId: string;
  }): Promise<void> {
    const commentId = await this.asInstallation(thread.installationId, thread.repo, async (rest) => {
      const { data } = await rest.issues.createComment({
        owner: thread.owner,
        repo: thread.repo,
        issue_number: thread.number,
        body: `Hangar started a run for this: ${this.runUrl(thread.runId)}`,
      });
      return data.id;
    });
    await recordReply(this.options.db, { ...thread, commentId });
  }

  /** Edits the start comment of each ended run with its outcome and pull request. Answers how many were told. */
  async tellOutcomes(limit = 20): Promise<number> {
    const replies = await endedReplies(this.options.db, limit);
    for (const reply of replies) {
      const lines = [`Hangar's run ${this.runUrl(reply.runId)} ended: ${reply.state}.`];
      if (reply.pullRequestUrl) lines.push('', `Pull request: ${reply.pullRequestUrl}`);
      try {
        await this.asInstallation(reply.installationId, reply.repo, (rest) =>
          rest.issues.updateComment({
            owner: reply.owner,
            repo: reply.repo,
            comment_id: reply.commentId,
            body: lines.join('\n'),
          }),
        );
      } catch (error) {
        // GitHub refusing for good (the installation or the comment is gone) is told once, as a failure here.
        const status = (error as GitHubRefusal).status;
        if (!(error instanceof GitHubRefusal) || status === undefined || status >= 500) throw error;
      }
      await markTold(this.options.db, reply.runId);
    }
    return replies.length;
  }

  private async asInstallation<T>(
    installationId: number,
    repo: string,
    act: (rest: ReturnType<typeof restClient>) => Promise<T>,
  ): Promise<T> {
    if (!this.app) throw new GitHubRefusal('no GitHub App is configured', undefined);
    const { token } = await this.app.mintToken(installationId, [repo]);
    const rest = restClient(this.options.apiUrl, token);
    try {
      return await act(rest);
    } catch (error) {
      throw refusalOf(error, `replying in ${repo}`);
    } finally {
      await rest.request('DELETE /installation/token').catch(() => undefined);
    }
  }

  /** Where this server's GitHub is: its API (tokens are revoked there) and its git. */
  get target(): GitHubTarget {
    return { apiUrl: this.options.apiUrl, gitBaseUrl: this.options.gitBaseUrl };
  }

  async open(teamUid: string, repos: RepoName[], execution: ExecutionRef): Promise<RunGitHub> {
    const links = repos.length > 0 ? await store.links(this.options.db, teamUid) : [];
    const credentials: RepoCredential[] = [];
    const run = tokenAccess(this.target, credentials, this.runUrl(execution.runId));
    try {
      const byOwner = new Map<string, RepoName[]>();
      for (const name of repos) {
        const key = name.owner.toLowerCase();
        byOwner.set(key, [...(byOwner.get(key) ?? []), name]);
      }
      const tokenSecret = links.find((link) => link.token_secret !== null)?.token_secret ?? null;
      let pat: string | null | undefined;
      for (const [owner, names] of byOwner) {
        const installation = links.find((link) => link.account_login?.toLowerCase() === owner);
        if (installation && this.app) {
          const { token } = await this.app.mintToken(
            installation.installation_id!,
            names.map((name) => name.repo),
          );
          for (const name of names) credentials.push({ ...name, token, source: 'installation' });
          continue;
        }
        if (tokenSecret === null) continue;
        pat ??= await this.options.readSecret(teamUid, tokenSecret);
        if (pat === null)
          throw new GitHubRefusal(`the team's GitHub token secret "${tokenSecret}" no longer exists`, undefined);
        for (const name of names) credentials.push({ ...name, token: pat, source: 'personal_access_token' });
      }
      return run;
    } catch (error) {
      await run.close();
      throw error;
    }
  }
}
