import type { Kysely } from 'kysely';
import type { DB } from '../database.js';
import { roleInTeam } from '../identities/index.js';
import { integrationNotConfigured, invalidRequest, notFound, upstreamUnreachable } from '../platform/http/errors.js';
import type { ExecutionRef, GitHubAccess, RepoCredential, RepoName, RunGitHub } from './access.js';
import { GitHubAppClient, GitHubRefusal, RUN_PERMISSIONS, refusalOf, restClient } from './app-client.js';
import { type GitHubTarget, tokenAccess } from './publish.js';
import * as store from './store.js';
import { endedReplies, markTold, recordReply } from './thread-replies.js';
import { claimRefusalReply, releaseRefusalReply } from './trigger-records.js';

/** A GitHub login: letters, digits and single hyphens, at most 39 characters; an App's bot ends in `[bot]`. */
const GITHUB_LOGIN = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:\[bot\])?$/;

/** A collaborator's permission on a repository, as GitHub's permission endpoint says it. */
export type RepositoryPermission = 'admin' | 'write' | 'read' | 'none';

/**
 * What Hangar answers in a thread when it starts nothing for someone: what they can do, nothing about the teams,
 * environments or limits behind it.
 */
export const REFUSAL_REPLIES = {
  access:
    'Hangar did not start: only people with write access to this repository can ask it for work. Ask a maintainer of the repository.',
  rate: 'Hangar did not start: it has taken as many requests here as it takes in an hour. Try again later.',
} as const;

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
  /** An installation's service identity, once made: the creator of its runs for GitHub users mapped to no one. */
  service_user_uid?: string;
  /** An installation's allow-list: GitHub logins that start runs without write access, as the Hangar user given. */
  allowed_logins?: Array<{ login: string; user_uid: string; created_at: string }>;
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
    const links: LinkView[] = [];
    for (const row of rows) {
      const allowed =
        row.installation_id === null ? [] : await store.allowedLogins(this.options.db, teamUid, row.installation_id);
      links.push({
        ...(row.installation_id !== null
          ? {
              installation_id: row.installation_id,
              account: row.account_login!,
              ...(row.service_user_uid ? { service_user_uid: row.service_user_uid } : {}),
              allowed_logins: allowed.map((entry) => ({
                login: entry.login,
                user_uid: entry.user_uid,
                created_at: entry.created_at.toISOString(),
              })),
            }
          : {}),
        ...(row.token_secret !== null ? { token_secret: row.token_secret } : {}),
        created_at: row.created_at.toISOString(),
      });
    }
    return { links };
  }

  /**
   * Lets a GitHub login start runs from the installation's repositories without write access, and makes its runs
   * the Hangar user's (a member of the team: its grants are what the runs may use).
   */
  async allowLogin(
    teamUid: string,
    installationId: number,
    login: string,
    userUid: string,
  ): Promise<{ links: LinkView[] }> {
    if (!GITHUB_LOGIN.test(login)) throw invalidRequest(`"${login}" is not a GitHub login`);
    await this.requireLink(teamUid, installationId);
    if ((await roleInTeam(this.options.db, teamUid, userUid)) === undefined)
      throw invalidRequest(`user ${userUid} is not a member of this team`);
    await store.allowLogin(this.options.db, teamUid, installationId, login, userUid);
    return this.links(teamUid);
  }

  async disallowLogin(teamUid: string, installationId: number, login: string): Promise<{ links: LinkView[] }> {
    await this.requireLink(teamUid, installationId);
    if (!(await store.disallowLogin(this.options.db, teamUid, installationId, login)))
      throw notFound(`${login} is not on the allow-list of installation ${installationId}`);
    return this.links(teamUid);
  }

  private async requireLink(teamUid: string, installationId: number): Promise<void> {
    if (!(await store.linksInstallation(this.options.db, teamUid, installationId)))
      throw notFound(`installation ${installationId} is not linked to this team`);
  }

  /**
   * Who a run the GitHub user `login` asks for in the team is created as: the Hangar user the link's allow-list maps
   * the login to (while a member of the team), else the link's service identity when the login has write access to
   * the repository (`permission`, asked of GitHub by the caller once for every team), else nobody.
   */
  async triggerCreator(
    teamUid: string,
    installationId: number,
    login: string,
    permission: () => Promise<RepositoryPermission>,
  ): Promise<string | undefined> {
    if (login === '') return undefined;
    const mapped = await store.allowedUser(this.options.db, teamUid, installationId, login);
    if (mapped !== undefined && (await roleInTeam(this.options.db, teamUid, mapped)) !== undefined) return mapped;
    const granted = await permission();
    if (granted !== 'admin' && granted !== 'write') return undefined;
    return store.ensureServiceUser(this.options.db, teamUid, installationId);
  }

  /**
   * The GitHub user's permission on the repository, asked of GitHub (GET /repos/{owner}/{repo}/collaborators/
   * {username}/permission) with a token of the installation limited to the repository and to its metadata, revoked
   * at once. `maintain` reads as write, `triage` as read (GitHub's own mapping); a login GitHub does not know is none.
   */
  async repositoryPermission(
    installationId: number,
    owner: string,
    repo: string,
    login: string,
  ): Promise<RepositoryPermission> {
    try {
      return await this.asInstallation(installationId, repo, { metadata: 'read' }, async (rest) => {
        const { data } = await rest.repos.getCollaboratorPermissionLevel({ owner, repo, username: login });
        const permission = String(data.permission);
        return permission === 'admin' || permission === 'write' || permission === 'read' ? permission : 'none';
      });
    } catch (error) {
      if (error instanceof GitHubRefusal && error.status === 404) return 'none';
      // Not knowing is not a yes: nothing starts, and the delivery fails visibly (GitHub's delivery log says 502).
      throw upstreamUnreachable(
        `asking GitHub for ${login}'s permission on ${owner}/${repo}: ${(error as Error).message}`,
      );
    }
  }

  /**
   * Tells the GitHub user in the thread why nothing started, once per user, thread and reason (a flood of comments
   * gets one answer). A reply GitHub does not take is tried again at the next refusal.
   */
  async replyRefused(
    thread: { installationId: number; owner: string; repo: string; number: number },
    login: string,
    reason: keyof typeof REFUSAL_REPLIES,
  ): Promise<void> {
    const claim = { repository: `${thread.owner}/${thread.repo}`, number: thread.number, login, reason };
    if (!(await claimRefusalReply(this.options.db, claim))) return;
    try {
      await this.asInstallation(thread.installationId, thread.repo, { issues: 'write' }, (rest) =>
        rest.issues.createComment({
          owner: thread.owner,
          repo: thread.repo,
          issue_number: thread.number,
          body: REFUSAL_REPLIES[reason],
        }),
      );
    } catch (error) {
      await releaseRefusalReply(this.options.db, claim);
      throw error;
    }
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
    const commentId = await this.asInstallation(thread.installationId, thread.repo, undefined, async (rest) => {
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
        await this.asInstallation(reply.installationId, reply.repo, undefined, (rest) =>
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
    permissions: Record<string, 'read' | 'write'> | undefined,
    act: (rest: ReturnType<typeof restClient>) => Promise<T>,
  ): Promise<T> {
    if (!this.app) throw new GitHubRefusal('no GitHub App is configured', undefined);
    const { token } = await this.app.mintToken(installationId, [repo], permissions);
    const rest = restClient(this.options.apiUrl, token);
    try {
      return await act(rest);
    } catch (error) {
      throw refusalOf(error, `replying in ${repo}`);
    } finally {
      await rest.request('DELETE /installation/token').catch(() => undefined);
    }
  }

  /** The permissions of a CREATOR run's installation token: no more than the creator's login has on every repository. */
  private async creatorPermissions(
    teamUid: string,
    installationId: number,
    names: RepoName[],
    creatorUid: string,
  ): Promise<Record<string, 'read' | 'write'>> {
    const login = await store.loginOfUser(this.options.db, teamUid, installationId, creatorUid);
    if (login === undefined)
      throw new GitHubRefusal(
        `config.credential_strategy is CREATOR, but the run's creator has no GitHub login on the allow-list of installation ${installationId} (an instance administrator maps one: hangar github allow); use EXECUTOR for the team's GitHub access`,
        undefined,
      );
    let writable = true;
    for (const name of names) {
      const permission = await this.repositoryPermission(installationId, name.owner, name.repo, login);
      if (permission === 'none')
        throw new GitHubRefusal(
          `config.credential_strategy is CREATOR, and the creator's GitHub login ${login} has no access to ${name.owner}/${name.repo}`,
          undefined,
        );
      if (permission === 'read') writable = false;
    }
    return writable ? { ...RUN_PERMISSIONS } : { contents: 'read' };
  }

  /** Where this server's GitHub is: its API (tokens are revoked there) and its git. */
  get target(): GitHubTarget {
    return { apiUrl: this.options.apiUrl, gitBaseUrl: this.options.gitBaseUrl };
  }

  /**
   * `asCreator` (a run whose credential_strategy is CREATOR): the tokens stand for that user's GitHub identity, the
   * login the installation's allow-list maps them to. Each installation token is limited to what that login may do
   * on every repository it covers (GitHub's permission endpoint: write or admin keeps the run's permissions, read
   * gives contents read only, so nothing is pushed); a creator mapped to no login, a repository they have no access
   * to, and one only the team's personal access token covers (the token is not theirs) are refused.
   */
  async open(teamUid: string, repos: RepoName[], execution: ExecutionRef, asCreator?: string): Promise<RunGitHub> {
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
          const permissions =
            asCreator === undefined
              ? undefined
              : await this.creatorPermissions(teamUid, installation.installation_id!, names, asCreator);
          const { token } = await this.app.mintToken(
            installation.installation_id!,
            names.map((name) => name.repo),
            permissions,
          );
          for (const name of names) credentials.push({ ...name, token, source: 'installation' });
          continue;
        }
        if (tokenSecret === null) continue;
        if (asCreator !== undefined)
          throw new GitHubRefusal(
            `config.credential_strategy is CREATOR, but only the team's personal access token covers ${names.map((name) => `${name.owner}/${name.repo}`).join(', ')}, and it is not the creator's GitHub identity; use EXECUTOR, or link a GitHub App installation`,
            undefined,
          );
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
