import http from 'node:http';
import type net from 'node:net';
import { allowLineFor, allows } from '../rules.js';
import type { LeaseRequest, Refusal, RefusalReason } from './protocol.js';
import type { RunBudgets } from './run-budget.js';
import { clientHelloName, MAX_HELLO_BYTES, NEED_MORE } from './sni.js';
import type { Upstream } from './upstream.js';

/**
 * One lease's HTTP proxy: CONNECT tunnels (TLS passed through unopened) and plain HTTP in absolute form. A host is
 * judged by the CONNECT line or the request URL, which the Host header must agree with, and inside a tunnel by the
 * ClientHello's server name (or a plain request's Host), which must agree too: a client cannot ask for an allowed
 * name and then talk to another.
 */

const HOP_BY_HOP = ['proxy-connection', 'proxy-authorization', 'connection', 'keep-alive', 'te', 'trailer', 'upgrade'];

export interface LeaseContext {
  request: LeaseRequest;
  upstream: Upstream;
  budgets: RunBudgets;
  refuse(refusal: Omit<Refusal, 'run' | 'phase' | 'at'>): void;
}

/** The words a refused client sees, with the entry that would allow the host. */
function refusalText(context: LeaseContext, host: string, port: number, reason: RefusalReason, detail: string): string {
  const { phase } = context.request;
  const hint =
    reason === 'not_allowed' ? ` (to allow it: add "${allowLineFor(host, port)}" to network.${phase}.allow)` : '';
  return `hangar egress: ${host}:${port} refused for this run's ${phase}: ${detail}${hint}\n`;
}

function splitHostPort(value: string, defaultPort: number): { host: string; port: number } | undefined {
  const match = /^\[?([^\]]*?)\]?(?::(\d{1,5}))?$/.exec(value.trim());
  if (!match?.[1]) return undefined;
  return { host: match[1].toLowerCase().replace(/\.$/, ''), port: match[2] ? Number(match[2]) : defaultPort };
}

/** Why a request for host:port is refused before anything connects, or undefined. */
function judge(context: LeaseContext, host: string, port: number, method: string) {
  if (!allows(context.request.rules, host, port, method))
    return { reason: 'not_allowed' as const, detail: `not on the ${context.request.phase} allow list` };
  return undefined;
}

/** The first reachable address of an allowed host, or the refusal. */
async function destination(context: LeaseContext, host: string) {
  const reachable = await context.upstream.reachable(host);
  const address = reachable.addresses[0];
  if (address !== undefined) return { address };
  return reachable.none
    ? { reason: 'unresolved' as const, detail: 'the name does not resolve' }
    : { reason: 'private_address' as const, detail: `it resolves to ${reachable.refusal}` };
}

export function leaseProxy(context: LeaseContext): http.Server {
  const server = http.createServer({ requestTimeout: 0 });
  server.on('connect', (request: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    // The socket is the tunnel's from here on: a client that resets it must not end the process.
    client.on('error', () => client.destroy());
    void tunnel(context, request, client, head).catch(() => client.destroy());
  });
  server.on('request', (request, response) => {
    void forward(context, request, response).catch(() => response.destroy());
  });
  server.on('clientError', (_error, socket) => socket.destroy());
  return server;
}

async function tunnel(context: LeaseContext, request: http.IncomingMessage, client: net.Socket, head: Buffer) {
  const { run } = context.request;
  const target = splitHostPort(request.url ?? '', 443);
  const deny = (host: string, port: number, reason: RefusalReason, detail: string, status = 403) => {
    context.refuse({ host, port, reason, detail });
    const text = refusalText(context, host, port, reason, detail);
    client.end(
      `HTTP/1.1 ${status} Forbidden\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`,
    );
  };
  if (!target) return deny(request.url ?? '', 0, 'not_allowed', 'the CONNECT line names no host', 400);
  const { host, port } = target;
  const hostHeader = request.headers.host ? splitHostPort(request.headers.host, port) : undefined;
  if (hostHeader && hostHeader.host !== host)
    return deny(host, port, 'name_mismatch', `the Host header names ${hostHeader.host}`);
  const refused = judge(context, host, port, 'CONNECT');
  if (refused) return deny(host, port, refused.reason, refused.detail);
  const admitted = context.budgets.admit(run, client);
  if (admitted)
    return deny(
      host,
      port,
      admitted,
      admitted === 'byte_budget' ? "the run's byte budget is spent" : "the run's connections are all in use",
      429,
    );
  client.once('close', () => context.budgets.close(run, client));
  const where = await destination(context, host);
  if (where.address === undefined) return deny(host, port, where.reason, where.detail);
  client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
  // The first bytes say which name the client really talks to; nothing goes upstream before they agree.
  let first = head;
  while (clientHelloName(first) === NEED_MORE && first.length < MAX_HELLO_BYTES) {
    const chunk = await new Promise<Buffer | undefined>((resolve) => {
      client.once('data', resolve);
      client.once('close', () => resolve(undefined));
    });
    if (!chunk) return;
    first = Buffer.concat([first, chunk]);
  }
  client.pause();
  const hello = clientHelloName(first);
  const spoken = hello === NEED_MORE ? undefined : hello.tls ? hello.name : plainHost(first, port);
  if (spoken === undefined) {
    context.refuse({ host, port, reason: 'no_server_name', detail: 'the tunnel named no server (TLS without SNI)' });
    return client.destroy();
  }
  if (spoken !== host) {
    context.refuse({
      host: spoken,
      port,
      reason: 'name_mismatch',
      detail: `the tunnel to ${host} asked for ${spoken}`,
    });
    return client.destroy();
  }
  const upstream = await context.upstream.connect(where.address, port).catch(() => undefined);
  if (!upstream) return client.destroy();
  const count = (chunk: Buffer) => context.budgets.spend(run, chunk.length);
  client.on('data', count);
  upstream.on('data', count);
  upstream.write(first);
  client.pipe(upstream);
  upstream.pipe(client);
  client.resume();
  upstream.on('error', () => client.destroy());
  client.on('error', () => upstream.destroy());
  client.on('close', () => upstream.destroy());
  upstream.on('close', () => client.destroy());
}

/** The Host of a plain HTTP request sent inside a tunnel, when the bytes are one. */
function plainHost(data: Buffer, port: number): string | undefined {
  const text = data.toString('latin1');
  const match = /\r\nhost:\s*([^\r\n]+)/i.exec(text);
  return match?.[1] ? splitHostPort(match[1], port)?.host : undefined;
}

async function forward(context: LeaseContext, request: http.IncomingMessage, response: http.ServerResponse) {
  const { run } = context.request;
  let url: URL | undefined;
  try {
    url = request.url?.startsWith('http://') ? new URL(request.url) : undefined;
  } catch {
    url = undefined;
  }
  const deny = (host: string, port: number, reason: RefusalReason, detail: string, status = 403) => {
    context.refuse({ host, port, reason, detail });
    response.writeHead(status, { 'content-type': 'text/plain', connection: 'close' });
    response.end(refusalText(context, host, port, reason, detail));
  };
  if (!url) {
    response.writeHead(400, { 'content-type': 'text/plain', connection: 'close' });
    return response.end('hangar egress: send requests through this proxy in absolute form (http://host/path)\n');
  }
  const host = url.hostname
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase();
  const port = Number(url.port || 80);
  const hostHeader = request.headers.host ? splitHostPort(request.headers.host, port) : undefined;
  if (hostHeader && hostHeader.host !== host)
    return deny(host, port, 'name_mismatch', `the Host header names ${hostHeader.host}`);
  const refused = judge(context, host, port, request.method ?? 'GET');
  if (refused) return deny(host, port, refused.reason, refused.detail);
  const connection = { destroy: () => response.destroy() };
  const admitted = context.budgets.admit(run, connection);
  if (admitted) return deny(host, port, admitted, "the run's connections or bytes are spent", 429);
  response.once('close', () => context.budgets.close(run, connection));
  const where = await destination(context, host);
  if (where.address === undefined) return deny(host, port, where.reason, where.detail);
  const socket = await context.upstream.connect(where.address, port).catch(() => undefined);
  if (!socket) {
    response.writeHead(502, { 'content-type': 'text/plain' });
    return response.end(`hangar egress: ${host}:${port} did not answer\n`);
  }
  const headers = { ...request.headers };
  for (const name of HOP_BY_HOP) delete headers[name];
  const outgoing = http.request({
    createConnection: () => socket,
    method: request.method,
    path: `${url.pathname}${url.search}`,
    headers: { ...headers, host: url.host, connection: 'close' },
  });
  request.on('data', (chunk: Buffer) => context.budgets.spend(run, chunk.length));
  outgoing.on('response', (answer) => {
    const answerHeaders = { ...answer.headers };
    for (const name of HOP_BY_HOP) delete answerHeaders[name];
    response.writeHead(answer.statusCode ?? 502, answerHeaders);
    answer.on('data', (chunk: Buffer) => context.budgets.spend(run, chunk.length));
    answer.pipe(response);
  });
  outgoing.on('error', () => response.destroy());
  request.pipe(outgoing);
}
