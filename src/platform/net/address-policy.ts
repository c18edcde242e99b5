import dns from 'node:dns/promises';
import net from 'node:net';
import ipaddr from 'ipaddr.js';

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/** What the operator lets through besides public addresses: host names (exact) and addresses or CIDR ranges. */
export interface AllowedHosts {
  names: Set<string>;
  ranges: Array<[Address, number]>;
}

const HOST_LABEL = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;

/**
 * Parses `HANGAR_MCP_ALLOWED_HOSTS`-style lists: comma-separated host names, addresses and CIDR ranges.
 * Throws with the offending entry when one is neither.
 */
export function parseAllowedHosts(list: string): AllowedHosts {
  const allowed: AllowedHosts = { names: new Set(), ranges: [] };
  for (const raw of list
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '')) {
    const entry = raw.replace(/^\[(.*)\]$/, '$1');
    if (ipaddr.isValidCIDR(entry)) {
      const [address, bits] = ipaddr.parseCIDR(entry);
      allowed.ranges.push([
        normalized(address),
        address.kind() === 'ipv6' && normalized(address).kind() === 'ipv4' ? bits - 96 : bits,
      ]);
    } else if (ipaddr.isValid(entry) && net.isIP(entry) !== 0) {
      const address = normalized(ipaddr.parse(entry));
      allowed.ranges.push([address, address.kind() === 'ipv4' ? 32 : 128]);
    } else if (
      entry
        .replace(/\.$/, '')
        .split('.')
        .every((label) => HOST_LABEL.test(label))
    ) {
      allowed.names.add(entry.toLowerCase().replace(/\.$/, ''));
    } else {
      throw new Error(`"${raw}" is neither a host name, an address nor a CIDR range`);
    }
  }
  return allowed;
}

/** IPv4-mapped IPv6 addresses (`::ffff:127.0.0.1`) are the IPv4 address they carry. */
function normalized(address: Address): Address {
  return address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()
    ? (address as ipaddr.IPv6).toIPv4Address()
    : address;
}

/** The host of a URL without IPv6 brackets or a trailing dot, lower case (WHATWG URLs already canonicalize `0x7f000001`). */
function hostOf(url: URL): string {
  return url.hostname
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '')
    .toLowerCase();
}

/**
 * Which addresses Hangar's server may connect to on a run's behalf (HTTP MCP servers): public unicast addresses
 * only, unless the operator allows a host name or range. Loopback, private (10/8, 172.16/12, 192.168/16,
 * fc00::/7), carrier-grade NAT, link-local (the cloud metadata service), unspecified, multicast, reserved and the
 * IPv6 ranges that embed an IPv4 address (NAT64, 6to4, Teredo) are refused. Classification is ipaddr.js's.
 */
export class AddressPolicy {
  constructor(private readonly allowed: AllowedHosts = { names: new Set(), ranges: [] }) {}

  static fromList(list: string | undefined): AddressPolicy {
    return new AddressPolicy(parseAllowedHosts(list ?? ''));
  }

  /** Whether the operator allowed this host name itself (then any address it resolves to is fine). */
  allowsName(hostname: string): boolean {
    return this.allowed.names.has(hostname.replace(/\.$/, '').toLowerCase());
  }

  /** Why `ip` (a literal address) is refused, or undefined when it may be reached. */
  refusalOf(ip: string): string | undefined {
    if (!ipaddr.isValid(ip)) return `${ip} is not an IP address`;
    const address = normalized(ipaddr.parse(ip));
    if (this.allowed.ranges.some(([range, bits]) => range.kind() === address.kind() && address.match(range, bits)))
      return undefined;
    const range = address.range();
    if (range === 'unicast') return undefined;
    return `${address.toString()} is a ${range} address, which Hangar does not connect to unless the operator allows it (HANGAR_MCP_ALLOWED_HOSTS)`;
  }

  /**
   * Why a URL is refused before anything connects: not http(s), or a host that is (or resolves to) an address
   * refused by `refusalOf`. A name that does not resolve now passes: the connection is checked again anyway.
   */
  async refusalOfUrl(raw: string): Promise<string | undefined> {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      return 'it is not a valid URL';
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return `it must use http or https, got ${url.protocol}`;
    const host = hostOf(url);
    if (this.allowsName(host)) return undefined;
    if (net.isIP(host) !== 0) return this.refusalOf(host);
    let addresses: Array<{ address: string }>;
    try {
      addresses = await dns.lookup(host, { all: true, verbatim: true });
    } catch {
      return undefined;
    }
    for (const { address } of addresses) {
      const refusal = this.refusalOf(address);
      if (refusal) return `${host} resolves to ${refusal}`;
    }
    return undefined;
  }
}
