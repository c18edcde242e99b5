import dgram from 'node:dgram';
import fs from 'node:fs';
import net from 'node:net';

/** Where a lease of the egress proxy listens on the server's loopback (network/proxy). */
export interface LeasePorts {
  proxyPort: number;
  dnsPort: number;
}

/** Where the relay in the container listens for the egress proxy and its resolver (the proxy variables name the first). */
export const EGRESS_PROXY_PORT = 3128;
export const EGRESS_DNS_PORT = 5353;
/** Where the execution's egress sockets are inside its container. */
export const CONTAINER_EGRESS_PROXY = '/opt/hangar/egress-proxy.sock';
export const CONTAINER_EGRESS_DNS = '/opt/hangar/egress-dns.sock';

/** How long the proxy's resolver may take to answer one question. */
const DNS_TIMEOUT_MS = 10_000;
/** Questions of one connection waiting for their answers at once; more are dropped (a resolver's client retries). */
const MAX_QUESTIONS_IN_FLIGHT = 32;

/**
 * The egress proxy for the processes of one container, which cannot reach the server's loopback: two unix sockets
 * on the host, bound into that container alone, that the relay in it (api-relay.ts) carries the proxy's port and DNS
 * questions to. Each goes to the lease the container's phase holds now (`point`), and nowhere else whatever the run
 * sends; with none (a phase without an allow list), each connection is closed at once. Pointing elsewhere cuts
 * what is open, as a bwrap sandbox's lease closing does.
 */
export class EgressSockets {
  private target: LeasePorts | undefined;
  private readonly open = new Set<net.Socket>();

  private constructor(
    private readonly servers: net.Server[],
    readonly proxyFile: string,
    readonly dnsFile: string,
  ) {}

  /** Listens at `<base>-proxy.sock` and `<base>-dns.sock` (in a directory only the server enters). */
  static async listen(base: string): Promise<EgressSockets> {
    const proxyFile = `${base}-proxy.sock`;
    const dnsFile = `${base}-dns.sock`;
    let sockets: EgressSockets | undefined;
    const proxy = net.createServer((client) => sockets!.carryConnection(client));
    const dns = net.createServer((client) => sockets!.carryQuestions(client));
    sockets = new EgressSockets([proxy, dns], proxyFile, dnsFile);
    for (const [server, file] of [
      [proxy, proxyFile],
      [dns, dnsFile],
    ] as const) {
      fs.rmSync(file, { force: true });
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(file, () => resolve());
      });
      // The container's user (the run user) connects to it; the directory around it stays the server's own.
      fs.chmodSync(file, 0o666);
    }
    return sockets;
  }

  /** From now on, to `target`'s proxy and resolver; undefined refuses. What was open goes. */
  point(target: LeasePorts | undefined): void {
    if (this.target?.proxyPort === target?.proxyPort && this.target?.dnsPort === target?.dnsPort) return;
    this.target = target;
    for (const socket of this.open) socket.destroy();
    this.open.clear();
  }

  close(): void {
    this.point(undefined);
    for (const server of this.servers) server.close();
    fs.rmSync(this.proxyFile, { force: true });
    fs.rmSync(this.dnsFile, { force: true });
  }

  private track(socket: net.Socket): void {
    this.open.add(socket);
    socket.once('close', () => this.open.delete(socket));
  }

  private carryConnection(client: net.Socket): void {
    const target = this.target;
    if (!target) return void client.destroy();
    const upstream = net.connect({ host: '127.0.0.1', port: target.proxyPort });
    this.track(client);
    this.track(upstream);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    client.pipe(upstream).pipe(client);
  }

  /** Framed questions (a two-byte length each, as DNS over TCP), each asked of the lease's resolver over UDP. */
  private carryQuestions(client: net.Socket): void {
    const target = this.target;
    if (!target) return void client.destroy();
    this.track(client);
    client.on('error', () => undefined);
    let pending = Buffer.alloc(0);
    let inFlight = 0;
    client.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 2 && pending.length >= 2 + pending.readUInt16BE(0)) {
        const question = pending.subarray(2, 2 + pending.readUInt16BE(0));
        pending = pending.subarray(2 + question.length);
        if (inFlight >= MAX_QUESTIONS_IN_FLIGHT) continue;
        inFlight += 1;
        void ask(target.dnsPort, question).then((answer) => {
          inFlight -= 1;
          if (!answer || client.destroyed) return;
          const length = Buffer.alloc(2);
          length.writeUInt16BE(answer.length);
          client.write(Buffer.concat([length, answer]));
        });
      }
    });
  }
}

/** One question to the resolver at the server's loopback `port`; undefined when it does not answer in time. */
function ask(port: number, question: Buffer): Promise<Buffer | undefined> {
  return new Promise((resolve) => {
    const socket = dgram.createSocket('udp4');
    const done = (answer: Buffer | undefined) => {
      clearTimeout(timer);
      socket.close();
      resolve(answer);
    };
    const timer = setTimeout(() => done(undefined), DNS_TIMEOUT_MS);
    socket.on('error', () => done(undefined));
    socket.once('message', (answer) => done(answer));
    socket.send(question, port, '127.0.0.1');
  });
}
