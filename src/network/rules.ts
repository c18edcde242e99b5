import net from 'node:net';
import { NETWORK_PRESETS, type NetworkPreset, PRESET_NAMES } from './presets.js';
import type {
  AllowEntry,
  AllowRule,
  EnvironmentNetwork,
  NetworkBody,
  NetworkPhase,
  PhaseNetwork,
  PhaseNetworkBody,
} from './schemas.js';

/**
 * An environment's network, checked and put in one shape: what the schema cannot say (a host name's grammar, where a
 * wildcard may stand, known methods) is refused here with the entry it is about.
 */

const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'CONNECT']);
export const DEFAULT_PORTS = [80, 443];

/** Why `host` is not a name or `*.` wildcard an allow list may hold, or undefined. */
function hostProblem(host: string): string | undefined {
  if (net.isIP(host.replace(/^\[|\]$/g, '')) !== 0)
    return 'is an address: allow lists name hosts (the proxy refuses private addresses whatever the name)';
  const labels = (host.startsWith('*.') ? host.slice(2) : host).split('.');
  if (labels.some((label) => label.includes('*')))
    return 'may hold a wildcard only as its first label (`*.example.com`)';
  if (labels.length < (host.startsWith('*.') ? 2 : 1) || !labels.every((label) => LABEL.test(label)))
    return 'is not a host name';
  if (host.length > 253) return 'is longer than 253 characters';
  return undefined;
}

function ruleOf(entry: AllowEntry, where: string): { rule: AllowRule } | { problem: string } {
  let host: string;
  let ports: number[] = DEFAULT_PORTS;
  let methods: string[] | undefined;
  if (typeof entry === 'string') {
    const match = /^(.*?)(?::(\d{1,5}))?$/.exec(entry.trim())!;
    host = match[1]!;
    if (match[2] !== undefined) ports = [Number(match[2])];
  } else {
    host = entry.host.trim();
    if (entry.ports) ports = [...new Set(entry.ports)].sort((a, b) => a - b);
    if (entry.methods) methods = [...new Set(entry.methods.map((method) => method.toUpperCase()))];
  }
  host = host.toLowerCase().replace(/\.$/, '');
  const problem = hostProblem(host);
  if (problem) return { problem: `${where} "${host}" ${problem}` };
  if (ports.some((port) => port < 1 || port > 65535)) return { problem: `${where} has a port outside 1-65535` };
  const unknown = methods?.find((method) => !METHODS.has(method));
  if (unknown) return { problem: `${where} names the method "${unknown}" (known: ${[...METHODS].join(', ')})` };
  return { rule: { host, ports, ...(methods ? { methods } : {}) } };
}

function normalizePhase(body: PhaseNetworkBody, phase: NetworkPhase): { value: PhaseNetwork } | { problem: string } {
  if (body === 'off' || body === 'open') return { value: body };
  const allow: AllowRule[] = [];
  for (const [index, entry] of (body.allow ?? []).entries()) {
    const result = ruleOf(entry, `network.${phase}.allow[${index}]`);
    if ('problem' in result) return result;
    allow.push(result.rule);
  }
  const presets = [...new Set(body.presets ?? [])];
  if (allow.length === 0 && presets.length === 0)
    return { problem: `network.${phase} lists no host and no preset: say "off" for no network` };
  return { value: { allow, ...(presets.length > 0 ? { presets } : {}) } };
}

/** The stored form of a request's `network`, or the first problem found. */
export function normalizeNetwork(body: NetworkBody): { network: EnvironmentNetwork } | { problem: string } {
  if (typeof body === 'boolean') {
    const value = body ? 'open' : 'off';
    return { network: { setup: value, agent: value } };
  }
  const network: EnvironmentNetwork = {};
  for (const phase of ['setup', 'agent'] as const) {
    const given = body[phase];
    if (given === undefined) continue;
    const result = normalizePhase(given, phase);
    if ('problem' in result) return result;
    network[phase] = result.value;
  }
  return { network };
}

/** A stored network read back leniently: whatever does not parse is left out (the operator's default applies). */
export function storedNetwork(raw: unknown): EnvironmentNetwork | undefined {
  if (raw === true || raw === false) return { setup: raw ? 'open' : 'off', agent: raw ? 'open' : 'off' };
  if (typeof raw !== 'object' || raw === null) return undefined;
  const network: EnvironmentNetwork = {};
  for (const phase of ['setup', 'agent'] as const) {
    const given = (raw as Record<string, unknown>)[phase];
    if (given === 'off' || given === 'open') network[phase] = given;
    else if (typeof given === 'object' && given !== null) {
      const { allow, presets } = given as { allow?: unknown; presets?: unknown };
      const body = {
        allow: Array.isArray(allow) ? (allow as AllowEntry[]) : [],
        presets: Array.isArray(presets)
          ? (presets.filter((name) => PRESET_NAMES.includes(name as NetworkPreset)) as NetworkPreset[])
          : [],
      };
      const result = normalizePhase(body, phase);
      if ('value' in result) network[phase] = result.value;
    }
  }
  return Object.keys(network).length > 0 ? network : undefined;
}

/** What one phase of a run gets: nothing, the open internet, or only the rules (presets expanded). */
export type EffectiveNetwork = { kind: 'off' } | { kind: 'open' } | { kind: 'allow'; rules: AllowRule[] };

/**
 * One phase's network for a run: the environment's choice under the operator's ceiling. The operator's `allowed`
 * (a harness's `network`, HANGAR_SETUP_NETWORK) is both the default (open when the environment says nothing) and
 * the ceiling: an environment cannot open, or list hosts on, what the operator closed.
 */
export function effectiveNetwork(chosen: PhaseNetwork | undefined, operatorAllows: boolean): EffectiveNetwork {
  if (!operatorAllows || chosen === 'off') return { kind: 'off' };
  if (chosen === undefined || chosen === 'open') return { kind: 'open' };
  const presetRules = (chosen.presets ?? []).flatMap((name) =>
    (NETWORK_PRESETS[name as NetworkPreset] ?? []).map((host) => ({ host, ports: DEFAULT_PORTS })),
  );
  return { kind: 'allow', rules: [...chosen.allow, ...presetRules] };
}

/** Whether `pattern` (a name or `*.` wildcard) covers `host`; a wildcard covers subdomains, not the name itself. */
export function hostMatches(pattern: string, host: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, '');
  if (!pattern.startsWith('*.')) return pattern === name;
  return name.endsWith(pattern.slice(1)) && name.length > pattern.length - 1;
}

/** Whether the rules allow a request: `method` is the plain HTTP method, or CONNECT for a tunnel. */
export function allows(rules: AllowRule[], host: string, port: number, method: string): boolean {
  return rules.some(
    (rule) =>
      hostMatches(rule.host, host) &&
      rule.ports.includes(port) &&
      (rule.methods === undefined || rule.methods.includes(method.toUpperCase())),
  );
}

/** Whether any rule names `host` at all (on any port): what the proxy's resolver answers. */
export function namesHost(rules: AllowRule[], host: string): boolean {
  return rules.some((rule) => hostMatches(rule.host, host));
}

/** The one entry that would allow a refused host, as an environment's allow list takes it. */
export function allowLineFor(host: string, port: number | undefined): string {
  return port === undefined || DEFAULT_PORTS.includes(port) ? host : `${host}:${port}`;
}
