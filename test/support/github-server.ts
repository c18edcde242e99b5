import { createPublicKey, generateKeyPairSync, type KeyObject, randomBytes, verify } from 'node:crypto';
import { EventEmitter, once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A small real GitHub REST server for tests, speaking the endpoints Hangar uses with GitHub's shapes and status
 * codes: installation tokens (the App's JWT checked for real, RS256 against the App's public key), repositories,
 * pull requests, issue comments, collaborators' permissions, token revocation. Octokit is pointed at it with
 * `baseUrl`. Every call is recorded (with its Authorization header, so a test can say which credential was used).
 */

/** A collaborator's role on a repository, as GitHub names them (`none`: not a collaborator). */
export type CollaboratorRole = 'admin' | 'maintain' | 'write' | 'triage' | 'read' | 'none';

export interface RecordedCall {
  method: string;
  path: string;
  authorization: string | undefined;
  body: Record<string, unknown> | undefined;
  status: number;
}

interface Installation {
  id: number;
  account: string;
  /** Lower-cased `owner/repo` names it was granted. */
  repos: Set<string>;
  revoked: boolean;
}

export interface IssuedToken {
  token: string;
  installationId: number;
  /** Lower-cased `owner/repo` names; empty: all of the installation's. */
  repositories: string[];
  permissions: Record<string, string>;
  revoked: boolean;
}

interface PullRequest {
  number: number;
  owner: string;
  repo: string;
  title: string;
  body: string;
  head: string;
  base: string;
  draft: boolean;
  state: 'open' | 'closed';
}

interface Comment {
  id: number;
  owner: string;
  repo: string;
  issue: number;
  body: string;
}

/** An App's test key pair: the private half for Hangar's configuration, the public half for the server. */
export function testAppKey(): { privateKeyPem: string; publicKey: KeyObject } {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { privateKeyPem: privateKey.export({ type: 'pkcs1', format: 'pem' }).toString(), publicKey };
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export class GitHubServer {
  readonly calls: RecordedCall[] = [];
  readonly tokens = new Map<string, IssuedToken>();
  readonly pulls: PullRequest[] = [];
  readonly comments: Comment[] = [];
  private readonly installations = new Map<number, Installation>();
  private readonly repos = new Map<string, { owner: string; repo: string; defaultBranch: string }>();
  /** Per lower-cased `owner/repo`, each lower-cased login's role. */
  private readonly collaborators = new Map<string, Map<string, CollaboratorRole>>();
  private readonly server = http.createServer((request, response) => void this.handle(request, response));
  /** Tells of each request answered (after its effect: a comment posted, a token revoked). */
  private readonly answered = new EventEmitter();
  private nextId = 1000;
  private url = '';

  private constructor(
    readonly appId: number,
    private publicKey: KeyObject,
    /** Where the repositories' git lives (the smart-HTTP server), for html and clone URLs. */
    private readonly gitBaseUrl: () => string,
  ) {}

  static async start(options: { appId: number; publicKey: KeyObject | string; gitBaseUrl: () => string }) {
    const key = typeof options.publicKey === 'string' ? createPublicKey(options.publicKey) : options.publicKey;
    const server = new GitHubServer(options.appId, key, options.gitBaseUrl);
    await new Promise<void>((resolve) => server.server.listen(0, '127.0.0.1', resolve));
    server.url = `http://127.0.0.1:${(server.server.address() as AddressInfo).port}`;
    return server;
  }

  get baseUrl(): string {
    return this.url;
  }

  addRepo(owner: string, repo: string, defaultBranch = 'main'): void {
    this.repos.set(`${owner}/${repo}`.toLowerCase(), { owner, repo, defaultBranch });
  }

  /** Gives `login` a role on owner/repo (`none` takes it away), as the repository's settings would. */
  setCollaborator(owner: string, repo: string, login: string, role: CollaboratorRole): void {
    const key = `${owner}/${repo}`.toLowerCase();
    const roles = this.collaborators.get(key) ?? new Map<string, CollaboratorRole>();
    roles.set(login.toLowerCase(), role);
    this.collaborators.set(key, roles);
  }

  addInstallation(id: number, account: string, repos: string[]): void {
    this.installations.set(id, {
      id,
      account,
      repos: new Set(repos.map((name) => name.toLowerCase())),
      revoked: false,
    });
  }

  /** The App's key is replaced on GitHub (the operator's copy is now a bad key); returns the old one. */
  replaceAppKey(publicKey: KeyObject): KeyObject {
    const old = this.publicKey;
    this.publicKey = publicKey;
    return old;
  }

  /** A fine-grained personal access token with write access to `repos` (lower-cased `owner/repo`). */
  addPersonalToken(token: string, repos: string[]): void {
    const id = -(this.installations.size + 1);
    this.installations.set(id, {
      id,
      account: '',
      repos: new Set(repos.map((name) => name.toLowerCase())),
      revoked: false,
    });
    this.tokens.set(token, {
      token,
      installationId: id,
      repositories: [],
      permissions: { contents: 'write', pull_requests: 'write', issues: 'write' },
      revoked: false,
    });
  }

  /** The installation is uninstalled: GitHub answers 404 for it from now on, and its tokens stop working. */
  revokeInstallation(id: number): void {
    const installation = this.installations.get(id);
    if (installation) installation.revoked = true;
  }

  /** Whether `token` may read (or, with `write`, push to) owner/repo now: the git server asks this. */
  allows(token: string, owner: string, repo: string, write: boolean): boolean {
    const issued = this.tokens.get(token);
    if (!issued || issued.revoked) return false;
    const installation = this.installations.get(issued.installationId);
    if (!installation || installation.revoked) return false;
    const name = `${owner}/${repo}`.toLowerCase();
    if (!installation.repos.has(name)) return false;
    if (issued.repositories.length > 0 && !issued.repositories.includes(name)) return false;
    const contents = issued.permissions.contents;
    return write ? contents === 'write' : contents === 'read' || contents === 'write';
  }

  /**
   * Resolves once `check` (of what this server holds: comments, tokens, calls) holds: looked at now and after each
   * request it answers, not polled. Fails with `what` after `timeoutMs`.
   */
  async until(what: string, check: () => boolean, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!check()) {
      const signal = AbortSignal.timeout(Math.max(0, deadline - Date.now()));
      await once(this.answered, 'request', { signal }).catch((error: unknown) => {
        if (signal.aborted) throw new Error(`timed out waiting for: ${what}`);
        throw error;
      });
    }
  }

  callsTo(method: string, pattern: RegExp): RecordedCall[] {
    return this.calls.filter((call) => call.method === method && pattern.test(call.path));
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const url = new URL(request.url ?? '/', this.url);
    const call: RecordedCall = {
      method: request.method ?? 'GET',
      path: url.pathname,
      authorization: request.headers.authorization,
      body: undefined,
      status: 500,
    };
    this.calls.push(call);
    let status = 200;
    let payload: unknown;
    try {
      call.body = text ? (JSON.parse(text) as Record<string, unknown>) : undefined;
      [status, payload] = this.route(call, url, request.headers.authorization);
    } catch (error) {
      status = error instanceof HttpError ? error.status : 500;
      payload = { message: (error as Error).message, documentation_url: 'https://docs.github.com/rest' };
    }
    call.status = status;
    this.answered.emit('request');
    if (status === 204) {
      response.writeHead(204).end();
      return;
    }
    response.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(payload));
  }

  private route(call: RecordedCall, url: URL, authorization: string | undefined): [number, unknown] {
    const { method, path } = call;
    const body = call.body ?? {};
    let match = /^\/app\/installations\/(\d+)\/access_tokens$/.exec(path);
    if (match && method === 'POST') return [201, this.createToken(Number(match[1]), body, authorization)];
    match = /^\/app\/installations\/(\d+)$/.exec(path);
    if (match && method === 'GET') {
      this.checkJwt(authorization);
      const installation = this.installation(Number(match[1]));
      return [200, { id: installation.id, account: { login: installation.account, type: 'Organization' } }];
    }
    if (path === '/installation/token' && method === 'DELETE') {
      const issued = this.tokenOf(authorization);
      issued.revoked = true;
      return [204, null];
    }
    match = /^\/repos\/([^/]+)\/([^/]+)(\/.*)?$/.exec(path);
    if (!match) throw new HttpError(404, 'Not Found');
    const [, owner, repo, rest = ''] = match as unknown as [string, string, string, string | undefined];
    const known = this.repos.get(`${owner}/${repo}`.toLowerCase());
    match = /^\/collaborators\/([^/]+)\/permission$/.exec(rest);
    if (match && method === 'GET') {
      // Needs only the metadata permission every installation token has, for a repository the token covers.
      this.requireRepoCoverage(authorization, owner, repo);
      if (!known) throw new HttpError(404, 'Not Found');
      const login = decodeURIComponent(match[1]!);
      const role = this.collaborators.get(`${owner}/${repo}`.toLowerCase())?.get(login.toLowerCase()) ?? 'none';
      // GitHub's `permission` is the legacy name of the role: maintain reads as write, triage as read.
      const permission = role === 'maintain' ? 'write' : role === 'triage' ? 'read' : role;
      return [200, { permission, role_name: role, user: { login, type: 'User' } }];
    }
    // Comments need the issues permission only (a token minted for a reply has nothing else).
    match = /^\/issues\/(\d+)\/comments$/.exec(rest);
    if (match && method === 'POST') {
      this.requireRepoCoverage(authorization, owner, repo);
      if (!known) throw new HttpError(404, 'Not Found');
      this.requirePermission(authorization, 'issues');
      const comment: Comment = {
        id: this.nextId++,
        owner,
        repo,
        issue: Number(match[1]),
        body: String(body.body ?? ''),
      };
      this.comments.push(comment);
      return [201, this.commentJson(comment)];
    }
    match = /^\/issues\/comments\/(\d+)$/.exec(rest);
    if (match && method === 'PATCH') {
      this.requireRepoCoverage(authorization, owner, repo);
      if (!known) throw new HttpError(404, 'Not Found');
      this.requirePermission(authorization, 'issues');
      const comment = this.comments.find((c) => c.owner === owner && c.repo === repo && c.id === Number(match![1]));
      if (!comment) throw new HttpError(404, 'Not Found');
      comment.body = String(body.body ?? '');
      return [200, this.commentJson(comment)];
    }
    this.requireRepoAccess(authorization, owner, repo);
    if (!known) throw new HttpError(404, 'Not Found');
    if (rest === '' && method === 'GET') {
      return [
        200,
        {
          name: known.repo,
          full_name: `${known.owner}/${known.repo}`,
          owner: { login: known.owner },
          private: true,
          default_branch: known.defaultBranch,
          html_url: `${this.url}/${known.owner}/${known.repo}`,
          clone_url: `${this.gitBaseUrl()}/${known.owner}/${known.repo}`,
        },
      ];
    }
    if (rest === '/pulls' && method === 'GET') {
      const head = url.searchParams.get('head');
      const state = url.searchParams.get('state') ?? 'open';
      const found = this.pulls.filter(
        (pull) =>
          pull.owner === owner &&
          pull.repo === repo &&
          (state === 'all' || pull.state === state) &&
          (head === null || `${owner}:${pull.head}` === head),
      );
      return [200, found.map((pull) => this.pullJson(pull))];
    }
    if (rest === '/pulls' && method === 'POST') {
      this.requirePermission(authorization, 'pull_requests');
      const head = String(body.head ?? '');
      if (!head || !body.base || !body.title) throw new HttpError(422, 'Validation Failed');
      if (
        this.pulls.some(
          (pull) => pull.owner === owner && pull.repo === repo && pull.head === head && pull.state === 'open',
        )
      )
        throw new HttpError(422, `Validation Failed: A pull request already exists for ${owner}:${head}.`);
      const pull: PullRequest = {
        number: this.pulls.length + 1,
        owner,
        repo,
        title: String(body.title),
        body: String(body.body ?? ''),
        head,
        base: String(body.base),
        draft: body.draft === true,
        state: 'open',
      };
      this.pulls.push(pull);
      return [201, this.pullJson(pull)];
    }
    match = /^\/pulls\/(\d+)$/.exec(rest);
    if (match && method === 'PATCH') {
      this.requirePermission(authorization, 'pull_requests');
      const pull = this.pulls.find((p) => p.owner === owner && p.repo === repo && p.number === Number(match![1]));
      if (!pull) throw new HttpError(404, 'Not Found');
      if (typeof body.title === 'string') pull.title = body.title;
      if (typeof body.body === 'string') pull.body = body.body;
      return [200, this.pullJson(pull)];
    }
    throw new HttpError(404, 'Not Found');
  }

  private pullJson(pull: PullRequest) {
    return {
      number: pull.number,
      title: pull.title,
      body: pull.body,
      state: pull.state,
      draft: pull.draft,
      head: { ref: pull.head },
      base: { ref: pull.base },
      html_url: `${this.url}/${pull.owner}/${pull.repo}/pull/${pull.number}`,
    };
  }

  private commentJson(comment: Comment) {
    return {
      id: comment.id,
      body: comment.body,
      html_url: `${this.url}/${comment.owner}/${comment.repo}/issues/${comment.issue}#issuecomment-${comment.id}`,
    };
  }

  private installation(id: number): Installation {
    const installation = this.installations.get(id);
    if (!installation || installation.revoked) throw new HttpError(404, 'Not Found');
    return installation;
  }

  private createToken(
    id: number,
    body: Record<string, unknown>,
    authorization: string | undefined,
  ): IssuedToken & {
    expires_at: string;
  } {
    this.checkJwt(authorization);
    const installation = this.installation(id);
    const names = Array.isArray(body.repositories) ? body.repositories.map(String) : [];
    const repositories = names.map((name) => `${installation.account}/${name}`.toLowerCase());
    for (const name of repositories)
      if (!installation.repos.has(name))
        throw new HttpError(
          422,
          'There is at least one repository that does not exist or is not accessible to the parent installation.',
        );
    const permissions = (body.permissions as Record<string, string> | undefined) ?? {
      contents: 'write',
      pull_requests: 'write',
      issues: 'write',
    };
    const issued: IssuedToken = {
      token: `ghs_${randomBytes(18).toString('base64url')}`,
      installationId: id,
      repositories,
      permissions,
      revoked: false,
    };
    this.tokens.set(issued.token, issued);
    return {
      ...issued,
      expires_at: new Date(Date.now() + 3600_000).toISOString(),
      // GitHub's field names.
      repository_selection: 'selected',
    } as unknown as IssuedToken & { expires_at: string };
  }

  /** The App's JWT: RS256 over header.payload with the App's key, iss = the App ID, not expired, at most 10 minutes. */
  private checkJwt(authorization: string | undefined): void {
    const match = /^Bearer ([\w-]+)\.([\w-]+)\.([\w-]+)$/i.exec(authorization ?? '');
    if (!match) throw new HttpError(401, 'A JSON web token could not be decoded');
    const [, header, payload, signature] = match as unknown as [string, string, string, string];
    const parsedHeader = JSON.parse(Buffer.from(header, 'base64url').toString('utf8')) as { alg?: string };
    if (parsedHeader.alg !== 'RS256')
      throw new HttpError(401, "'Expiration time' claim ('exp') must be a numeric value");
    const valid = verify(
      'RSA-SHA256',
      Buffer.from(`${header}.${payload}`),
      this.publicKey,
      Buffer.from(signature, 'base64url'),
    );
    if (!valid) throw new HttpError(401, 'A JSON web token could not be decoded');
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as {
      iss?: number | string;
      exp?: number;
      iat?: number;
    };
    const now = Math.floor(Date.now() / 1000);
    if (String(claims.iss) !== String(this.appId))
      throw new HttpError(401, "'Issuer' claim ('iss') must be an Integer");
    if (typeof claims.exp !== 'number' || claims.exp < now || claims.exp - (claims.iat ?? now) > 600)
      throw new HttpError(401, "'Expiration time' claim ('exp') is too far in the future");
  }

  private tokenOf(authorization: string | undefined): IssuedToken {
    const match = /^(?:token|bearer) (\S+)$/i.exec(authorization ?? '');
    const issued = match ? this.tokens.get(match[1]!) : undefined;
    if (!issued || issued.revoked || this.installations.get(issued.installationId)?.revoked)
      throw new HttpError(401, 'Bad credentials');
    return issued;
  }

  /** The token is alive and names the repository (whatever its permissions). */
  private requireRepoCoverage(authorization: string | undefined, owner: string, repo: string): void {
    const issued = this.tokenOf(authorization);
    const name = `${owner}/${repo}`.toLowerCase();
    const installation = this.installations.get(issued.installationId);
    if (!installation?.repos.has(name)) throw new HttpError(404, 'Not Found');
    if (issued.repositories.length > 0 && !issued.repositories.includes(name)) throw new HttpError(404, 'Not Found');
  }

  private requireRepoAccess(authorization: string | undefined, owner: string, repo: string): void {
    const issued = this.tokenOf(authorization);
    if (!this.allows(issued.token, owner, repo, false)) throw new HttpError(404, 'Not Found');
  }

  private requirePermission(authorization: string | undefined, permission: string): void {
    if (this.tokenOf(authorization).permissions[permission] !== 'write')
      throw new HttpError(403, 'Resource not accessible by integration');
  }
}
