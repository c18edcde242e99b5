import dns from 'node:dns/promises';
import net from 'node:net';
import { AddressPolicy } from '../../platform/net/address-policy.js';
import type { ProxySettings } from './protocol.js';

/**
 * Where an allowed name leads: its addresses (the operator's fixed ones first, else DNS), each checked by the address
 * policy, and the connection made to the checked literal address, so that what is checked is what is connected to.
 */
export class Upstream {
  private readonly policy: AddressPolicy;

  constructor(private readonly settings: ProxySettings) {
    this.policy = AddressPolicy.fromList(settings.allowedAddresses);
  }

  /** Every address of `host`, whether or not it may be reached. */
  async addresses(host: string, family?: 4 | 6): Promise<string[]> {
    const fixed = this.settings.hosts[host];
    const all = fixed
      ? fixed
      : (await dns.lookup(host, { all: true, verbatim: true }).catch(() => [])).map((entry) => entry.address);
    return family ? all.filter((address) => net.isIP(address) === family) : all;
  }

  /** Why `address` may not be reached, or undefined. */
  refusalOf(address: string): string | undefined {
    return this.policy.refusalOf(address);
  }

  /** The addresses of `host` a run may reach, and the refusal of the first that may not (when none may). */
  async reachable(host: string, family?: 4 | 6): Promise<{ addresses: string[]; refusal?: string; none: boolean }> {
    const all = await this.addresses(host, family);
    const addresses = all.filter((address) => !this.refusalOf(address));
    const refused = all.find((address) => this.refusalOf(address));
    return {
      addresses,
      none: all.length === 0,
      ...(addresses.length === 0 && refused ? { refusal: this.refusalOf(refused) } : {}),
    };
  }

  /** A socket to `address:port`, checked again on the address it connected to. */
  connect(address: string, port: number): Promise<net.Socket> {
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host: address, port });
      socket.once('error', reject);
      socket.once('connect', () => {
        socket.off('error', reject);
        const refusal = socket.remoteAddress ? this.refusalOf(socket.remoteAddress) : 'no remote address';
        if (refusal) {
          socket.destroy();
          reject(new Error(refusal));
        } else resolve(socket);
      });
    });
  }
}
