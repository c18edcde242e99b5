// The public surface of the network slice: what an environment's runs may reach (the model) and Hangar's egress
// proxy that enforces it. Other slices and the composition root import only this module.

export {
  type AccountEvent,
  RefusalAccount,
  type RefusalEntry,
  refusalsFromEvents,
  refusalsMarkdown,
} from './account.js';
export { countRefusal } from './metrics.js';
export { NETWORK_PRESETS, type NetworkPreset, PRESET_NAMES } from './presets.js';
export type { ProxySettings, Refusal, RefusalReason } from './proxy/protocol.js';
export { type EgressLease, EgressProxy } from './proxy/supervisor.js';
export {
  allowLineFor,
  allows,
  DEFAULT_PORTS,
  type EffectiveNetwork,
  effectiveNetwork,
  hostMatches,
  namesHost,
  normalizeNetwork,
  storedNetwork,
} from './rules.js';
export { RunNetwork, type RunNetworkOptions } from './run-network.js';
export {
  AllowEntry,
  AllowRule,
  EnvironmentNetwork,
  NetworkBody,
  type NetworkPhase,
  PhaseNetwork,
  PhaseNetworkBody,
  RefusalEntrySchema,
} from './schemas.js';
export {
  type SpawnNetwork,
  setWorkspaceNetwork,
  withWorkspaceNetwork,
  workspaceNetwork,
} from './workspace-networks.js';
