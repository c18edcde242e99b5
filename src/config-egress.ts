import net from 'node:net';
import type { ProxySettings } from './network/index.js';
import { parseAllowedHosts } from './platform/net/address-policy.js';

/**
 * The settings of Hangar's egress proxy (HANGAR_EGRESS_*, docs/configuration.md): the limits each run has through it,
 * and what the operator lets it reach beyond the public internet. Parsed with the rest of the configuration.
 */
export function egressSettings(env: NodeJS.ProcessEnv, fail: (message: string) => never): ProxySettings {
  const text = (name: string) => env[name]?.trim() || undefined;
  const whole = (name: string, fallback: number, min: number, max: number) => {
    const raw = text(name);
    if (raw === undefined) return fallback;
    if (!/^\d+$/.test(raw)) fail(`${name} must be a whole number, got "${raw}"`);
    const value = Number(raw);
    if (value < min || value > max) fail(`${name} must be between ${min} and ${max}, got ${value}`);
    return value;
  };
  const allowedAddresses = text('HANGAR_EGRESS_ALLOWED_ADDRESSES') ?? '';
  try {
    parseAllowedHosts(allowedAddresses);
  } catch (error) {
    fail(`HANGAR_EGRESS_ALLOWED_ADDRESSES: ${(error as Error).message}`);
  }
  return {
    maxConnections: whole('HANGAR_EGRESS_MAX_CONNECTIONS', 64, 1, 100_000),
    byteBudget: whole('HANGAR_EGRESS_BYTE_BUDGET_MB', 4096, 1, 1024 * 1024 * 1024) * 1024 * 1024,
    allowedAddresses,
    hosts: egressHosts(text('HANGAR_EGRESS_HOSTS') ?? '', fail),
  };
}

/** `name=address[ address...],name=address`: names the proxy resolves to fixed addresses before asking DNS. */
function egressHosts(raw: string, fail: (message: string) => never): Record<string, string[]> {
  const hosts: Record<string, string[]> = {};
  for (const entry of raw.split(',').map((part) => part.trim())) {
    if (entry === '') continue;
    const [name, addresses] = entry.split('=', 2).map((part) => part?.trim() ?? '');
    const list = (addresses ?? '').split(/\s+/).filter(Boolean);
    if (!name || list.length === 0 || list.some((address) => net.isIP(address) === 0))
      fail(`HANGAR_EGRESS_HOSTS: "${entry}" is not name=address (addresses separated by spaces)`);
    hosts[name.toLowerCase().replace(/\.$/, '')] = list;
  }
  return hosts;
}
