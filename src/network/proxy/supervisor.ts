import { type ChildProcess, fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FromProxy, LeaseRequest, ProxySettings, Refusal, ToProxy } from './protocol.js';

/** A sandbox's way out, open until `close`. */
export interface EgressLease {
  proxyPort: number;
  dnsPort: number;
  close(): void;
}

/**
 * The server's side of its egress proxy process: forks it on first use, opens and closes leases, and hands each
 * refusal to the listeners (the run's account). A proxy that dies is forked again for the next lease; the leases it
 * held fail closed (their sandboxes reach nothing), they never fall back to an open network.
 */
export class EgressProxy {
  private child: ChildProcess | undefined;
  private ready: Promise<ChildProcess> | undefined;
  private readonly pending = new Map<string, { resolve(lease: EgressLease): void; reject(error: Error): void }>();
  private readonly listeners = new Set<(refusal: Refusal) => void>();

  constructor(private readonly settings: ProxySettings) {}

  onRefusal(listener: (refusal: Refusal) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async open(request: Omit<LeaseRequest, 'lease'>): Promise<EgressLease> {
    const child = await this.start();
    const lease = randomUUID();
    return new Promise<EgressLease>((resolve, reject) => {
      this.pending.set(lease, { resolve, reject });
      this.post(child, { type: 'open', request: { ...request, lease } });
    });
  }

  /** Ends the proxy process and every lease it holds. */
  async stop(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    this.ready = undefined;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.disconnect();
    await exited;
  }

  private post(child: ChildProcess, message: ToProxy): void {
    if (child.connected) child.send(message);
  }

  private start(): Promise<ChildProcess> {
    if (this.ready) return this.ready;
    const here = fileURLToPath(import.meta.url);
    const typescript = path.extname(here) === '.ts';
    const child = fork(path.join(path.dirname(here), `main${path.extname(here)}`), [JSON.stringify(this.settings)], {
      execArgv: typescript ? ['--import', 'tsx'] : [],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      serialization: 'json',
    });
    this.child = child;
    this.ready = new Promise((resolve, reject) => {
      child.once('error', reject);
      child.on('message', (message: FromProxy) => {
        if (message.type === 'ready') resolve(child);
        else this.received(child, message);
      });
      child.once('exit', (code, signal) => {
        reject(new Error(`the egress proxy exited (${code ?? signal}) before it was ready`));
        for (const [lease, waiter] of this.pending) {
          waiter.reject(new Error('the egress proxy exited'));
          this.pending.delete(lease);
        }
        if (this.child === child) {
          this.child = undefined;
          this.ready = undefined;
        }
      });
    });
    return this.ready;
  }

  private received(child: ChildProcess, message: FromProxy): void {
    if (message.type === 'refusal') {
      for (const listener of this.listeners) listener(message.refusal);
      return;
    }
    if (message.type !== 'opened' && message.type !== 'failed') return;
    const waiter = this.pending.get(message.lease);
    if (!waiter) return;
    this.pending.delete(message.lease);
    if (message.type === 'failed')
      return waiter.reject(new Error(`the egress proxy cannot open a lease: ${message.error}`));
    waiter.resolve({
      proxyPort: message.proxyPort,
      dnsPort: message.dnsPort,
      close: () => this.post(child, { type: 'close', lease: message.lease }),
    });
  }
}
