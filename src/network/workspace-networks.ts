import path from 'node:path';

/**
 * What the processes of each execution's workspace get as network right now: its environment's choice for the phase
 * in progress (run-network.ts sets it before setup and again before the agent). Every sandboxed spawn passes through
 * `withWorkspaceNetwork` (sandbox/backend.ts), so setup commands, harnesses and the tools they start are judged
 * alike without each of them being told; a process outside any registered workspace keeps what its caller asked.
 */

/** One phase's network as a spawn takes it: none, the open internet, or only through a lease of the egress proxy. */
export interface SpawnNetwork {
  allowNetwork: boolean;
  egress?: { proxyPort: number; dnsPort: number };
}

const decided = new Map<string, SpawnNetwork>();

/** Sets (or with undefined, forgets) the network of the processes started in `workspace` from now on. */
export function setWorkspaceNetwork(workspace: string, network: SpawnNetwork | undefined): void {
  const key = path.resolve(workspace);
  if (network) decided.set(key, network);
  else decided.delete(key);
}

/** The network decided for the workspace `cwd` is in (or is), if any. */
export function workspaceNetwork(cwd: string): SpawnNetwork | undefined {
  for (let directory = path.resolve(cwd); ; directory = path.dirname(directory)) {
    const found = decided.get(directory);
    if (found) return found;
    if (path.dirname(directory) === directory) return undefined;
  }
}

/**
 * A spawn's options with its workspace's network applied. The caller's `allowNetwork` is the operator's ceiling (a
 * harness's `network`, HANGAR_SETUP_NETWORK, false for Hangar's own commands): a decision only ever narrows it.
 */
export function withWorkspaceNetwork<T extends { cwd: string; allowNetwork: boolean; egress?: SpawnNetwork['egress'] }>(
  options: T,
): T {
  const network = workspaceNetwork(options.cwd);
  if (!network) return options;
  const allowNetwork = options.allowNetwork && network.allowNetwork;
  const { egress: _ignored, ...rest } = options;
  return { ...rest, allowNetwork, ...(allowNetwork && network.egress ? { egress: network.egress } : {}) } as T;
}
