import type { SandboxSpawnOptions } from '../backend.js';
import { proxyVariables } from '../network.js';
import type { ContainerReach, ContainerRules } from './egress.js';
import { EGRESS_DNS_PORT, EGRESS_PROXY_PORT, type EgressSockets } from './egress-sockets.js';

/**
 * A networked container's network, phase by phase. The container is one for the whole execution, but setup and the
 * agent may each have their own network (an environment's allow list for one, `open` or none for the other): before
 * a process of another phase starts, the container gets that phase's rules (egress.ts) and its egress sockets the
 * phase's lease of the egress proxy. A process of the earlier phase that is still running gets the new phase's
 * network from then on, and loses its connections through the proxy.
 *
 * A container without an allow list in any phase keeps the rules it was opened with (`open`), as before.
 */
export class ContainerPhaseNetwork {
  private current: string | undefined;
  private switching: Promise<void> = Promise.resolve();

  private constructor(
    private readonly rules: ContainerRules,
    private readonly sockets: EgressSockets | undefined,
  ) {}

  /**
   * Confines the started container: the rules of `open` without sockets; with them, none but loopback and the API
   * until a phase's first process says what it gets.
   */
  static async confine(rules: ContainerRules, sockets: EgressSockets | undefined): Promise<ContainerPhaseNetwork> {
    const network = new ContainerPhaseNetwork(rules, sockets);
    const reach: ContainerReach = sockets ? 'off' : 'open';
    network.current = reach;
    await network.rules.load(reach);
    return network;
  }

  /** Resolves once the container has the network `options` asks for (its phase's); a failure fails the process. */
  enter(options: SandboxSpawnOptions): Promise<void> {
    const { sockets } = this;
    if (!sockets) return this.switching;
    const reach: ContainerReach = !options.allowNetwork ? 'off' : options.egress ? 'proxy' : 'open';
    const key = reach === 'proxy' ? `proxy ${options.egress!.proxyPort} ${options.egress!.dnsPort}` : reach;
    if (key === this.current) return this.switching;
    this.current = key;
    const lease = reach === 'proxy' ? options.egress : undefined;
    // One switch after another; a failed one fails every later process too (closed, never open by mistake).
    this.switching = this.switching.then(async () => {
      sockets.point(lease);
      await this.rules.load(reach, EGRESS_DNS_PORT);
    });
    return this.switching;
  }

  /** The proxy variables of a process behind the proxy (the relay's port on the container's loopback). */
  static variables(options: SandboxSpawnOptions): Record<string, string> {
    return options.allowNetwork && options.egress ? proxyVariables(EGRESS_PROXY_PORT) : {};
  }
}
