import { App } from '@octokit/app';
import { Octokit } from '@octokit/rest';

/** The permissions an execution's token carries: push its branch, open its pull request, reply in its thread. */
export const RUN_PERMISSIONS = { contents: 'write', pull_requests: 'write', issues: 'write' } as const;

/** What GitHub answered when it refused: its status and its message, for the run's timeline. */
export class GitHubRefusal extends Error {
  constructor(
    message: string,
    readonly status: number | undefined,
  ) {
    super(message);
  }
}

/** GitHub's reason from an Octokit error: `404 Not Found`, `401 A JSON web token could not be decoded`, ... */
export function refusalOf(error: unknown, what: string): GitHubRefusal {
  const status = (error as { status?: number }).status;
  const data = (error as { response?: { data?: { message?: unknown } } }).response?.data;
  const reason = typeof data?.message === 'string' ? data.message : (error as Error).message;
  return new GitHubRefusal(`${what}: GitHub answered ${status ?? 'nothing'}${reason ? ` (${reason})` : ''}`, status);
}

/** Octokit's own log lines (a failed request) would say nothing more than the refusal; they stay quiet. */
const quiet = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

/** A REST client for `baseUrl` acting with `token` (an installation token or a personal access token). */
export function restClient(baseUrl: string, token: string): Octokit {
  return new Octokit({ auth: token, baseUrl, log: quiet, request: { retries: 0 } });
}

/** The operator's GitHub App, through @octokit/app: its JWT signs the calls that mint installation tokens. */
export class GitHubAppClient {
  private readonly app: App;

  constructor(options: { appId: number; privateKey: string; baseUrl: string }) {
    this.app = new App({
      appId: options.appId,
      privateKey: options.privateKey,
      Octokit: Octokit.defaults({ baseUrl: options.baseUrl, log: quiet }),
      log: quiet,
    });
  }

  /** The account (organization or user login) an installation belongs to; a refusal when GitHub does not know it. */
  async installationAccount(installationId: number): Promise<string> {
    try {
      const { data } = await this.app.octokit.request('GET /app/installations/{installation_id}', {
        installation_id: installationId,
      });
      const account = data.account as { login?: string } | null;
      if (!account?.login) throw new GitHubRefusal(`installation ${installationId} has no account`, undefined);
      return account.login;
    } catch (error) {
      if (error instanceof GitHubRefusal) throw error;
      throw refusalOf(error, `GitHub App installation ${installationId}`);
    }
  }

  /**
   * A token of the installation limited to `repositories` (names under its account) and `permissions` (the run's,
   * unless a smaller set is enough: reading a collaborator's permission needs only the metadata every token has).
   */
  async mintToken(
    installationId: number,
    repositories: string[],
    permissions: Record<string, 'read' | 'write'> = RUN_PERMISSIONS,
  ): Promise<{ token: string; expiresAt: string }> {
    try {
      const { data } = await this.app.octokit.request('POST /app/installations/{installation_id}/access_tokens', {
        installation_id: installationId,
        repositories,
        permissions,
      });
      return { token: data.token, expiresAt: data.expires_at };
    } catch (error) {
      throw refusalOf(error, `minting a token of installation ${installationId}`);
    }
  }
}
