import fs from 'node:fs';
import net from 'node:net';
import { execFileAsync, failureOf } from '../../../platform/spawn/index.js';
import { type ApiRoute, egressRules, proxiedEgressRules } from '../network.js';
import type { EngineClient } from './engine-client.js';
import { runQuietly } from './exec.js';

/** How long loading the rules may take before the container is given up. */
const STEP_TIMEOUT_MS = 10_000;

/** What a networked container's processes may reach now: the internet but private addresses, nothing, or the proxy. */
export type ContainerReach = 'open' | 'off' | 'proxy';

/**
 * Confines a networked container's egress the way a networked bwrap sandbox's is (network.ts): nft rules in the
 * container's own network namespace refuse the host's addresses (the bridge's gateway among them), loopback of the
 * host, private, link-local (the cloud metadata service), shared, reserved and multicast destinations; DNS goes only
 * to the resolvers of the container's resolv.conf, and Hangar's API at a non-loopback address stays reachable. The
 * container has no capability (CapDrop ALL, no-new-privileges), so nothing in it can change the rules.
 *
 * Made after the container starts and before anything of the run executes in it. The rules are loaded from the
 * host with nsenter into the container's network namespace, which needs the server to run as root next to a rootful
 * engine (as the container sandbox does anyway: it binds host paths); anything else throws, and the run does not
 * start with an unfiltered network. A container whose phases differ (an allow list for one) gets the rules of each
 * phase as it starts (`load`): `off` leaves loopback and the API, `proxy` that and DNS redirected to the relay's
 * resolver port on loopback, where the egress proxy's lease answers (phase-network.ts).
 */
export class ContainerRules {
  private constructor(
    private readonly pid: number,
    private readonly api: ApiRoute | undefined,
    private readonly resolvers: string[],
  ) {}

  static async of(client: EngineClient, containerId: string, api: ApiRoute | undefined): Promise<ContainerRules> {
    const { body } = await client.call<{ State?: { Pid?: number; Running?: boolean } }>(
      'GET',
      `/containers/${containerId}/json`,
    );
    const pid = body.State?.Pid;
    if (!body.State?.Running || !pid || pid <= 1) throw new Error('the container is not running');
    // The rules must never land in the server's own namespace (a pid that ended and was reused by a host process).
    if (namespaceOf(pid) === namespaceOf('self'))
      throw new Error(`process ${pid} shares the server's network namespace, not the container's`);
    // Read before any run code has executed in the container; its resolv.conf is the engine's, read-only to the run.
    const resolvers = nameservers(await runQuietly(client, containerId, ['cat', '/etc/resolv.conf']));
    return new ContainerRules(pid, api && !api.spliced ? api : undefined, resolvers);
  }

  /** Replaces the namespace's rules by those of `reach`; `dnsPort` is the relay's resolver port for `proxy`. */
  load(reach: ContainerReach, dnsPort?: number): Promise<void> {
    const rules =
      reach === 'open'
        ? egressRules(this.api, this.resolvers)
        : proxiedEgressRules(this.api, reach === 'proxy' ? dnsPort : undefined);
    return nftInNamespace(this.pid, `flush ruleset\n${rules}`);
  }
}

/** The literal addresses of a resolv.conf's `nameserver` lines (a zone index dropped). */
export function nameservers(resolvConf: string): string[] {
  return [...resolvConf.matchAll(/^\s*nameserver\s+(\S+)/gm)]
    .map((match) => match[1]!.split('%')[0]!)
    .filter((address) => net.isIP(address) !== 0);
}

function namespaceOf(pid: number | 'self'): string {
  try {
    return fs.readlinkSync(`/proc/${pid}/ns/net`);
  } catch (error) {
    throw new Error(
      `cannot see the network namespace of process ${pid} (${(error as NodeJS.ErrnoException).code}): a networked container needs the server to run as root beside a rootful engine`,
    );
  }
}

/** Through the spawner (src/platform/spawn), as every process of the server's. */
async function nftInNamespace(pid: number, rules: string): Promise<void> {
  try {
    await execFileAsync('nsenter', ['-t', String(pid), '-n', '--', 'nft', '-f', '-'], {
      input: rules,
      timeout: STEP_TIMEOUT_MS,
      killSignal: 'SIGKILL',
    });
  } catch (error) {
    const failure = failureOf(error);
    if (!failure) throw new Error(`cannot run nsenter and nft: ${(error as Error).message}`);
    throw new Error(`loading the egress rules failed (${failure.how}): ${failure.stderrTail}`);
  }
}
