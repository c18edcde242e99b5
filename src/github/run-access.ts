import type { Kysely } from 'kysely';
import type { DB } from '../database.js';
import { authenticationRequired, invalidRequest, notAuthorized, notFound } from '../platform/http/errors.js';
import { executionSecretUser, runCredentialStrategy, type SecretUser } from '../runs/index.js';
import type { ExecutionRef, GitHubAccess, RepoName, RunGitHub } from './access.js';
import { GitHubRefusal } from './app-client.js';
import type { GitHubService } from './service.js';
import * as store from './store.js';

export interface RunGitHubAccessOptions {
  db: Kysely<DB>;
  github: GitHubService;
  /** Whether the operator configured the App: without it an installation link covers nothing. */
  appConfigured: boolean;
  /** The names among `names` a run acting as `user` may not use (the secrets slice). */
  unusableSecrets: (db: Kysely<DB>, user: SecretUser, names: string[]) => Promise<string[]>;
  readSecret: (teamUid: string, name: string) => Promise<string | null>;
  /**
   * The repositories of a team's environment as its runs clone them (none: gone or out of reach). `db` may be a
   * caller's transaction: on PGlite a read outside an open transaction waits for it to end.
   */
  environmentRepos: (db: Kysely<DB>, teamUid: string, environmentId: string) => Promise<RepoName[]>;
}

/** What git's credential protocol asks for: https://git-scm.com/docs/git-credential#IOFMT (useHttpPath on). */
export interface GitCredentialQuery {
  protocol: string;
  host: string;
  path: string;
}

/**
 * The GitHub access of executions, with the team's personal access token under the rule of every other team
 * secret: a run gets it only when its creator may use the secret (an admin, or a grant to the creator, the run's
 * agent identity or its environment; reckoned as of the execution). The token also stays out of the sandbox: the
 * harness's git asks for it through a credential helper (harnessCredential), answered only for the run's own
 * repositories and only while its sandbox runs, the grant checked at each ask.
 */
export class RunGitHubAccess implements GitHubAccess {
  constructor(private readonly options: RunGitHubAccessOptions) {}

  async open(teamUid: string, repos: RepoName[], execution: ExecutionRef): Promise<RunGitHub> {
    // Whose identity the tokens stand for: the run's recorded config.credential_strategy (service.ts open).
    const identity = await runCredentialStrategy(this.options.db, execution.runId);
    const access = await this.options.github.open(
      teamUid,
      repos,
      execution,
      identity?.strategy === 'CREATOR' ? identity.creatorUid : undefined,
    );
    if (!access.credentials.some((credential) => credential.source === 'personal_access_token')) return access;
    const { db } = this.options;
    const refusal = await this.tokenRefusal(
      db,
      teamUid,
      await executionSecretUser(db, execution.runId, execution.executionId, { sandboxRunning: false }),
    );
    if (refusal === undefined) return access;
    await access.close();
    throw new GitHubRefusal(refusal, undefined);
  }

  /**
   * The credential of one of the run's repositories that the team's personal access token covers, for the git of
   * the execution whose task token asked (the claim). An installation's token is the execution's own and in its
   * credential file: not served here.
   */
  async harnessCredential(
    claim: { runId: string; executionId: number } | null,
    query: GitCredentialQuery,
  ): Promise<{ username: string; password: string }> {
    if (!claim) throw authenticationRequired('the git credential helper needs the task token of a running execution');
    const { db } = this.options;
    const user = await executionSecretUser(db, claim.runId, claim.executionId, { sandboxRunning: true });
    if (!user) throw authenticationRequired('this task token belongs to an execution that is not running');
    const name = this.repositoryOf(query);
    const given =
      user.environmentId === null ? [] : await this.options.environmentRepos(db, user.teamUid, user.environmentId);
    if (!given.some((repo) => sameRepo(repo, name)))
      throw notFound(`this run was not given the repository ${name.owner}/${name.repo}`);
    const links = await store.links(db, user.teamUid);
    if (this.installedOwners(links).has(name.owner.toLowerCase()))
      throw notFound(`${name.owner}/${name.repo} is reached with the execution's installation token`);
    const secret = tokenSecretOf(links);
    if (secret === undefined) throw notFound(`no GitHub credential of the team covers ${name.owner}/${name.repo}`);
    const refusal = await this.tokenRefusal(db, user.teamUid, user);
    if (refusal !== undefined) throw notAuthorized(refusal);
    const token = await this.options.readSecret(user.teamUid, secret);
    if (token === null) throw notFound(`the team's GitHub token secret "${secret}" no longer exists`);
    return { username: 'x-access-token', password: token };
  }

  /**
   * The team secret a run in the environment uses without naming it: the team's token secret, when the environment
   * names a repository no linked installation covers (checked where a run's other secrets are: at its creation and
   * at each follow-up). Empty otherwise.
   */
  async secretsForEnvironment(db: Kysely<DB>, teamUid: string, environmentId: string): Promise<string[]> {
    const links = await store.links(db, teamUid);
    const secret = tokenSecretOf(links);
    if (secret === undefined) return [];
    const installed = this.installedOwners(links);
    const repos = await this.options.environmentRepos(db, teamUid, environmentId);
    return repos.some((repo) => !installed.has(repo.owner.toLowerCase())) ? [secret] : [];
  }

  /** The owners (lower case) a linked installation covers: none when the operator has no App. */
  private installedOwners(links: store.GitHubLink[]): Set<string> {
    if (!this.options.appConfigured) return new Set();
    return new Set(links.flatMap((link) => (link.account_login ? [link.account_login.toLowerCase()] : [])));
  }

  /** Why the run may not use the team's token secret; undefined when it may. */
  private async tokenRefusal(
    db: Kysely<DB>,
    teamUid: string,
    user: SecretUser | undefined,
  ): Promise<string | undefined> {
    const secret = tokenSecretOf(await store.links(db, teamUid));
    if (secret === undefined) return undefined;
    if (!user) return "the execution is no longer its run's current one";
    const refused = await this.options.unusableSecrets(db, user, [secret]);
    if (refused.length === 0) return undefined;
    return (
      `the team's GitHub token secret "${secret}" is not granted to this run's creator, its agent identity or its ` +
      `environment; a team admin can grant it (hangar secrets grant ${secret} ...) or link an App installation`
    );
  }

  /** The repository a credential query is for: on this server's git host, `owner/repo` with or without `.git`. */
  private repositoryOf(query: GitCredentialQuery): RepoName {
    const base = new URL(this.options.github.target.gitBaseUrl);
    if (`${query.protocol}:` !== base.protocol || query.host.toLowerCase() !== base.host.toLowerCase())
      throw notFound(`Hangar holds no credential for ${query.protocol}://${query.host}`);
    const prefix = base.pathname.replace(/^\/+|\/+$/g, '');
    let rest = query.path.replace(/^\/+|\/+$/g, '');
    if (prefix !== '') {
      if (!rest.startsWith(`${prefix}/`)) throw notFound(`Hangar holds no credential for ${query.path}`);
      rest = rest.slice(prefix.length + 1);
    }
    const match = /^([^/]+)\/([^/]+?)(?:\.git)?$/.exec(rest);
    if (!match) throw invalidRequest('path must name one repository as owner/repo (git: credential.useHttpPath)');
    return { owner: match[1]!, repo: match[2]! };
  }
}

function tokenSecretOf(links: store.GitHubLink[]): string | undefined {
  return links.find((link) => link.token_secret !== null)?.token_secret ?? undefined;
}

function sameRepo(a: RepoName, b: RepoName): boolean {
  return a.owner.toLowerCase() === b.owner.toLowerCase() && a.repo.toLowerCase() === b.repo.toLowerCase();
}
