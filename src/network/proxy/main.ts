import type dgram from 'node:dgram';
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import { type LeaseContext, leaseProxy } from './lease-proxy.js';
import type { FromProxy, ProxySettings, Refusal, ToProxy } from './protocol.js';
import { leaseResolver } from './resolver.js';
import { RunBudgets } from './run-budget.js';
import { Upstream } from './upstream.js';

/**
 * The egress proxy process: forked by the server (supervisor.ts), it holds every run's tunnels and resolvers so that
 * a download never competes with the API's event loop. It takes its settings as its one argument (JSON) and its
 * leases over the IPC channel, and ends when that channel closes: it never outlives its server.
 */

const settings = JSON.parse(process.argv[2] ?? '{}') as ProxySettings;
const upstream = new Upstream(settings);
const budgets = new RunBudgets(settings);
const leases = new Map<string, { run: string; proxy: http.Server; resolver: dgram.Socket }>();

function send(message: FromProxy): void {
  if (process.connected) process.send?.(message);
}

function listen(server: http.Server, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve((server.address() as AddressInfo).port));
  });
}

function bind(socket: dgram.Socket, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(0, host, () => resolve(socket.address().port));
  });
}

async function open(request: LeaseContext['request']): Promise<void> {
  const context: LeaseContext = {
    request,
    upstream,
    budgets,
    refuse: (refusal) =>
      send({
        type: 'refusal',
        refusal: { ...refusal, run: request.run, phase: request.phase, at: new Date().toISOString() } as Refusal,
      }),
  };
  const proxy = leaseProxy(context);
  const resolver = leaseResolver(context);
  budgets.attach(request.run);
  leases.set(request.lease, { run: request.run, proxy, resolver });
  try {
    const [proxyPort, dnsPort] = await Promise.all([listen(proxy, request.bind), bind(resolver, request.bind)]);
    send({ type: 'opened', lease: request.lease, proxyPort, dnsPort });
  } catch (error) {
    close(request.lease);
    send({ type: 'failed', lease: request.lease, error: (error as Error).message });
  }
}

function close(lease: string): void {
  const entry = leases.get(lease);
  if (!entry) return;
  leases.delete(lease);
  entry.proxy.close();
  entry.proxy.closeAllConnections();
  try {
    entry.resolver.close();
  } catch {
    // never bound
  }
  budgets.detach(entry.run);
}

process.on('message', (message: ToProxy) => {
  if (message.type === 'open') void open(message.request);
  else if (message.type === 'close') close(message.lease);
});
process.on('disconnect', () => process.exit(0));
// One connection's unforeseen failure must not take every run's network down with it: said, and carried on.
process.on('uncaughtException', (error) => process.stderr.write(`hangar egress proxy: ${error.stack ?? error}\n`));
send({ type: 'ready' });
