import dns from 'node:dns/promises';
import net from 'node:net';
import os from 'node:os';

/**
 * Where a networked sandbox may connect: Hangar's API (however the run reaches it), DNS, and anything but the host's
 * own, private and reserved addresses. bwrap's pasta (bwrap/pasta.ts) and a networked container (container/egress.ts)
 * load these rules in the sandbox's network namespace before the run starts.
 */

/** Where the sandbox sends DNS queries; pasta forwards them to the host's first resolver, wherever that is. */
export const SANDBOX_RESOLVER = '169.254.0.53';

/** Destinations no run reaches: loopback, private, shared, link-local, unspecified, reserved, multicast. */
const REFUSED_V4 = [
  '0.0.0.0/8',
  '10.0.0.0/8',
  '100.64.0.0/10',
  '127.0.0.0/8',
  '169.254.0.0/16',
  '172.16.0.0/12',
  '192.0.0.0/24',
  '192.168.0.0/16',
  '198.18.0.0/15',
  '224.0.0.0/3',
];
const REFUSED_V6 = ['::/127', '::ffff:0:0/96', '64:ff9b::/96', 'fc00::/7', 'fe80::/10', 'ff00::/8'];

/** Hangar's API as a networked run reaches it: through pasta's splice of the run's loopback, or at its addresses. */
export type ApiRoute = { spliced: true; port: number } | { spliced: false; port: number; addresses: string[] };

/**
 * The variables that send tools through the egress proxy at `port` of the sandbox's loopback (both spellings: curl
 * reads the lower case, others the upper); the sandbox's own loopback, where Hangar's API may be, goes direct.
 */
export function proxyVariables(port: number, host = '127.0.0.1'): Record<string, string> {
  const proxy = `http://${host}:${port}`;
  const direct = 'localhost,127.0.0.1,::1';
  return {
    HTTP_PROXY: proxy,
    HTTPS_PROXY: proxy,
    http_proxy: proxy,
    https_proxy: proxy,
    NO_PROXY: direct,
    no_proxy: direct,
    npm_config_proxy: proxy,
    npm_config_https_proxy: proxy,
  };
}

/** The host and port of Hangar's API URL, and whether they are the server's loopback; undefined when there is no URL. */
export function apiEndpoint(apiUrl: string | undefined): { host: string; port: number; loopback: boolean } | undefined {
  if (!apiUrl) return undefined;
  let url: URL;
  try {
    url = new URL(apiUrl);
  } catch {
    return undefined;
  }
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  return { host, port, loopback: host === 'localhost' || (net.isIP(host) !== 0 && isLoopback(host)) };
}

/** How the run reaches `apiUrl`; undefined when there is none to reach (a worker whose server is elsewhere still has one). */
export async function apiRoute(apiUrl: string | undefined): Promise<ApiRoute | undefined> {
  const endpoint = apiEndpoint(apiUrl);
  if (!endpoint) return undefined;
  const { host, port } = endpoint;
  if (endpoint.loopback) return { spliced: true, port };
  const addresses = net.isIP(host)
    ? [host]
    : (await dns.lookup(host, { all: true }).catch(() => [])).map((entry) => entry.address);
  return { spliced: false, port, addresses };
}

function isLoopback(address: string): boolean {
  return address === '::1' || address.startsWith('127.') || address.startsWith('::ffff:127.');
}

/**
 * The nft ruleset of a sandbox whose network is an allow list: loopback (where the egress proxy and its resolver
 * are spliced in or relayed) and Hangar's API, nothing else. Every other packet is rejected, so a tool that ignores
 * the proxy variables, or asks another resolver, fails at once instead of waiting. With `dnsRelay`, a port on the
 * sandbox's loopback (a container's relay to the proxy's resolver), every DNS question goes there, whatever resolver
 * it was sent to: the filter sees it redirected to loopback but still leaving by the route it had, so it is let
 * through by its new address.
 */
export function proxiedEgressRules(api: ApiRoute | undefined, dnsRelay?: number): string {
  const allowed = api && !api.spliced ? api.addresses : [];
  const family = (address: string) => (net.isIPv6(address) ? 'ip6' : 'ip');
  return [
    'table inet hangar {',
    '  chain egress {',
    '    type filter hook output priority 0; policy drop;',
    '    oifname "lo" accept',
    ...(dnsRelay ? [`    ip daddr 127.0.0.1 udp dport ${dnsRelay} accept`] : []),
    ...allowed.map((address) => `    ${family(address)} daddr ${address} tcp dport ${api!.port} accept`),
    '    meta l4proto tcp reject with tcp reset',
    '    reject',
    '  }',
    '}',
    ...(dnsRelay
      ? [
          'table ip hangar_dns {',
          '  chain output {',
          '    type nat hook output priority -100; policy accept;',
          `    udp dport 53 redirect to :${dnsRelay}`,
          '  }',
          '}',
        ]
      : []),
    '',
  ].join('\n');
}

/**
 * The nft ruleset of a sandbox's namespace: the API and DNS first, then every refused destination. `resolvers` are
 * the DNS servers the sandbox may ask (bwrap's is pasta's forwarder; a container's are those of its resolv.conf,
 * often a private address).
 */
export function egressRules(api: ApiRoute | undefined, resolvers: string[] = [SANDBOX_RESOLVER]): string {
  const own = Object.values(os.networkInterfaces())
    .flatMap((entries) => entries ?? [])
    .map((entry) => entry.address.split('%')[0]!);
  const v4 = [...REFUSED_V4, ...own.filter((address) => net.isIPv4(address))];
  const v6 = [...REFUSED_V6, ...own.filter((address) => net.isIPv6(address))];
  const allowed = api && !api.spliced ? api.addresses : [];
  return [
    'table inet hangar {',
    '  chain egress {',
    '    type filter hook output priority 0; policy accept;',
    '    oifname "lo" accept',
    ...resolvers.flatMap((resolver) =>
      ['udp', 'tcp'].map(
        (protocol) => `    ${net.isIPv6(resolver) ? 'ip6' : 'ip'} daddr ${resolver} ${protocol} dport 53 accept`,
      ),
    ),
    ...allowed.map(
      (address) => `    ${net.isIPv6(address) ? 'ip6' : 'ip'} daddr ${address} tcp dport ${api!.port} accept`,
    ),
    `    ip daddr { ${v4.join(', ')} } reject`,
    `    ip6 daddr { ${v6.join(', ')} } reject`,
    '  }',
    '}',
    '',
  ].join('\n');
}
