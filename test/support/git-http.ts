import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

/**
 * A real git smart-HTTP server for tests: `git http-backend` (git's own CGI) behind a small Node HTTP server that
 * asks for the token as the basic-auth password, as github.com does. Repositories are the bare ones of a
 * GitFixtures root (`<root>/<owner>/<repo>`). `authorize` says whether a password may read or push a repository;
 * every request is recorded with the user name and whether a password came.
 */
export interface GitRequest {
  method: string;
  path: string;
  service: string | null;
  user: string | null;
  status: number;
}

export type GitAuthorizer = (password: string, owner: string, repo: string, write: boolean) => boolean;

export class GitHttpServer {
  readonly requests: GitRequest[] = [];
  private readonly server = http.createServer((request, response) => this.handle(request, response));
  private url = '';

  private constructor(
    private readonly root: string,
    private readonly authorize: GitAuthorizer,
  ) {}

  static async start(root: string, authorize: GitAuthorizer): Promise<GitHttpServer> {
    const server = new GitHttpServer(root, authorize);
    await new Promise<void>((resolve) => server.server.listen(0, '127.0.0.1', resolve));
    server.url = `http://127.0.0.1:${(server.server.address() as AddressInfo).port}`;
    return server;
  }

  get baseUrl(): string {
    return this.url;
  }

  /**
   * Refuses every push to owner/repo with `message`, the way GitHub's protected branches do: a pre-receive hook
   * that prints it (`remote: ...`) and declines.
   */
  protect(owner: string, repo: string, message: string): void {
    const hook = path.join(this.root, owner, repo, 'hooks', 'pre-receive');
    fs.writeFileSync(hook, `#!/bin/sh\necho ${JSON.stringify(message)} >&2\nexit 1\n`, { mode: 0o755 });
  }

  unprotect(owner: string, repo: string): void {
    fs.rmSync(path.join(this.root, owner, repo, 'hooks', 'pre-receive'), { force: true });
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(request: http.IncomingMessage, response: http.ServerResponse): void {
    const url = new URL(request.url ?? '/', this.url);
    const service =
      url.searchParams.get('service') ?? (/\/(git-upload-pack|git-receive-pack)$/.exec(url.pathname)?.[1] || null);
    const record: GitRequest = { method: request.method ?? 'GET', path: url.pathname, service, user: null, status: 0 };
    this.requests.push(record);
    const match = /^\/([^/]+)\/([^/]+?)(?:\.git)?\/(info\/refs|git-upload-pack|git-receive-pack)$/.exec(url.pathname);
    if (!match) {
      record.status = 404;
      response.writeHead(404).end('Not Found');
      return;
    }
    const [, owner, repo] = match as unknown as [string, string, string];
    const credentials = /^Basic (.+)$/i.exec(request.headers.authorization ?? '');
    const decoded = credentials ? Buffer.from(credentials[1]!, 'base64').toString('utf8') : '';
    const colon = decoded.indexOf(':');
    const user = colon >= 0 ? decoded.slice(0, colon) : null;
    const password = colon >= 0 ? decoded.slice(colon + 1) : '';
    record.user = user;
    const write = service === 'git-receive-pack';
    if (!password || !this.authorize(password, owner, repo, write)) {
      // Without a valid password github.com asks for one (git then calls its credential helper) or refuses.
      record.status = password ? 403 : 401;
      response
        .writeHead(record.status, password ? {} : { 'www-authenticate': 'Basic realm="GitHub"' })
        .end(password ? 'Permission denied\n' : 'Authentication required\n');
      return;
    }
    const child = spawn('git', ['http-backend'], {
      env: {
        PATH: process.env.PATH,
        GIT_PROJECT_ROOT: this.root,
        GIT_HTTP_EXPORT_ALL: '1',
        PATH_INFO: `/${owner}/${repo}/${match[3]}`,
        REQUEST_METHOD: request.method ?? 'GET',
        QUERY_STRING: url.search.slice(1),
        CONTENT_TYPE: request.headers['content-type'] ?? '',
        HTTP_CONTENT_ENCODING: request.headers['content-encoding'] ?? '',
        GIT_PROTOCOL: String(request.headers['git-protocol'] ?? ''),
        // http-backend allows pushes from an authenticated user.
        REMOTE_USER: user ?? 'token',
        REMOTE_ADDR: '127.0.0.1',
      },
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    request.pipe(child.stdin);
    let head = Buffer.alloc(0);
    let headersDone = false;
    child.stdout.on('data', (chunk: Buffer) => {
      if (headersDone) {
        response.write(chunk);
        return;
      }
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      headersDone = true;
      let status = 200;
      const headers: Record<string, string> = {};
      for (const line of head.subarray(0, end).toString('utf8').split('\r\n')) {
        const at = line.indexOf(':');
        const name = line.slice(0, at).trim();
        const value = line.slice(at + 1).trim();
        if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10);
        else headers[name] = value;
      }
      record.status = status;
      response.writeHead(status, headers);
      response.write(head.subarray(end + 4));
    });
    child.on('close', () => {
      if (!headersDone) {
        record.status = 500;
        response.writeHead(500);
      }
      response.end();
    });
  }
}
