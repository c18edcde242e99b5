import { createHash } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { apiEndpoint } from '../network.js';
import {
  CONTAINER_EGRESS_DNS,
  CONTAINER_EGRESS_PROXY,
  EGRESS_DNS_PORT,
  EGRESS_PROXY_PORT,
  type EgressSockets,
} from './egress-sockets.js';
import { demultiplex, type EngineClient } from './engine-client.js';

/** Where the execution's API socket is inside its container. */
export const CONTAINER_API_SOCKET = '/opt/hangar/api.sock';
/** How long the relay in the container may take to listen. */
const READY_TIMEOUT_MS = 15_000;

/**
 * The relay inside the container, run by Hangar's node: each listener on the container's loopback carries what it
 * gets to a unix socket of the server's bound into this container alone. `tcp` listeners carry connections (the API
 * at its own port, so HANGAR_API_URL and the CLIs' model-proxy URLs need no change; the egress proxy); a `dns`
 * listener carries each UDP question, framed as DNS over TCP frames it (a two-byte length), and answers with the reply.
 * Loopback only: nothing on the bridge reaches it.
 */
const RELAY_SCRIPT = `
const net = require('node:net');
const dgram = require('node:dgram');
const listeners = JSON.parse(process.argv[1]);
const fail = (error) => { process.stderr.write(String(error) + '\\n'); process.exit(1); };
const tcp = ({ port, socket }) => new Promise((resolve) => {
  const relay = (client) => {
    const upstream = net.connect(socket);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    client.pipe(upstream).pipe(client);
  };
  const v4 = net.createServer(relay);
  v4.on('error', fail);
  v4.listen(port, '127.0.0.1', () => {
    const v6 = net.createServer(relay);
    v6.on('error', () => undefined); // a container without IPv6 loopback: 127.0.0.1 alone
    v6.listen(port, '::1');
    resolve();
  });
});
const dns = ({ port, socket }) => new Promise((resolve) => {
  const server = dgram.createSocket('udp4');
  server.on('error', fail);
  server.on('message', (question, from) => {
    const upstream = net.connect(socket);
    let answer = Buffer.alloc(0);
    upstream.setTimeout(10000, () => upstream.destroy());
    upstream.on('error', () => undefined);
    upstream.on('data', (chunk) => {
      answer = Buffer.concat([answer, chunk]);
      if (answer.length >= 2 && answer.length >= 2 + answer.readUInt16BE(0)) {
        server.send(answer.subarray(2, 2 + answer.readUInt16BE(0)), from.port, from.address);
        upstream.end();
      }
    });
    const length = Buffer.alloc(2);
    length.writeUInt16BE(question.length);
    upstream.write(Buffer.concat([length, question]));
  });
  server.bind(port, '127.0.0.1', resolve);
});
Promise.all(listeners.map((listener) => (listener.kind === 'dns' ? dns : tcp)(listener))).then(
  () => process.stdout.write('ready\\n'),
  fail,
);
`;

/** One listener of the relay in the container: its kind, its loopback port, and the socket it carries to. */
export interface RelayListener {
  kind: 'tcp' | 'dns';
  port: number;
  socket: string;
}

/**
 * Hangar's API for the processes of one container, which cannot reach the host's loopback (no network, or a bridge
 * whose rules refuse the host): a unix socket on the host, private to the server except for the socket itself,
 * bound into that container alone. Each connection is carried to the API's loopback address and port, and nowhere
 * else, whatever the run sends; it is the same API a bwrap run reaches through pasta's loopback splice.
 */
export class ApiSocket {
  private constructor(
    private readonly server: net.Server,
    readonly file: string,
  ) {}

  /** Listens at `file` (a path in a directory only the server can enter) and relays to `host`:`port`. */
  static async listen(file: string, host: string, port: number): Promise<ApiSocket> {
    fs.rmSync(file, { force: true });
    const server = net.createServer((client) => {
      const upstream = net.connect({ host, port });
      client.on('error', () => upstream.destroy());
      upstream.on('error', () => client.destroy());
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(file, () => resolve());
    });
    // The container's user (the run user) connects to it; the directory around it stays the server's own.
    fs.chmodSync(file, 0o666);
    return new ApiSocket(server, file);
  }

  close(): void {
    this.server.close();
    fs.rmSync(this.file, { force: true });
  }
}

/** The loopback host and port of Hangar's API when runs reach it there, else undefined (no relay is needed). */
export function loopbackApi(apiUrl: string | undefined): { host: string; port: number } | undefined {
  const endpoint = apiEndpoint(apiUrl);
  return endpoint?.loopback ? { host: endpoint.host, port: endpoint.port } : undefined;
}

/**
 * The sockets of one execution in the server's private directory, named by a hash of its container's name (a
 * socket's path must fit in 108 bytes, which a long TMPDIR and a run id would pass): `<base>.sock` for the API,
 * `<base>-proxy.sock` and `<base>-dns.sock` for the egress proxy.
 */
export function socketBase(directory: string, containerName: string): string {
  return path.join(directory, createHash('sha256').update(containerName).digest('hex').slice(0, 16));
}

/** The execution's sockets as the binds of its container (each alone, read-only). */
export function socketBinds(api: ApiSocket | undefined, egress: EgressSockets | undefined): string[] {
  return [
    ...(api ? [`${api.file}:${CONTAINER_API_SOCKET}:ro`] : []),
    ...(egress
      ? [`${egress.proxyFile}:${CONTAINER_EGRESS_PROXY}:ro`, `${egress.dnsFile}:${CONTAINER_EGRESS_DNS}:ro`]
      : []),
  ];
}

/** What the relay in the container listens for: the API at its own port, the egress proxy and its resolver. */
export function relayListeners(apiPort: number | undefined, egress: EgressSockets | undefined): RelayListener[] {
  return [
    ...(apiPort !== undefined ? [{ kind: 'tcp' as const, port: apiPort, socket: CONTAINER_API_SOCKET }] : []),
    ...(egress
      ? [
          { kind: 'tcp' as const, port: EGRESS_PROXY_PORT, socket: CONTAINER_EGRESS_PROXY },
          { kind: 'dns' as const, port: EGRESS_DNS_PORT, socket: CONTAINER_EGRESS_DNS },
        ]
      : []),
  ];
}

/**
 * Starts the relay in the container and resolves once it listens; the returned stream is its output, open as long
 * as it runs (destroying it does not stop it: the container's removal does).
 */
export async function startRelay(
  client: EngineClient,
  containerId: string,
  node: string,
  listeners: RelayListener[],
): Promise<Readable> {
  const exec = await client.call<{ Id: string }>('POST', `/containers/${containerId}/exec`, {
    Cmd: [node, '-e', RELAY_SCRIPT, JSON.stringify(listeners)],
    AttachStdout: true,
    AttachStderr: true,
    Tty: false,
  });
  const { output } = await client.hijack(`/exec/${exec.body.Id}/start`, { Detach: false, Tty: false });
  await new Promise<void>((resolve, reject) => {
    let said = '';
    let errors = '';
    const timer = setTimeout(() => fail('it did not start listening in time'), READY_TIMEOUT_MS);
    const fail = (why: string) => {
      clearTimeout(timer);
      reject(new Error(`the relay in the container failed: ${why}`));
    };
    demultiplex(
      output,
      (chunk) => {
        said += chunk.toString();
        if (said.includes('ready\n')) {
          clearTimeout(timer);
          resolve();
        }
      },
      (chunk) => (errors += chunk.toString()),
    );
    output.once('end', () => fail(errors.trim() || 'it ended'));
    output.once('error', (error) => fail(error.message));
  });
  return output;
}
