// The public surface of the network slice: what an environment's runs may reach (the model) and Hangar's egress
// proxy that enforces it. Other slices and the composition root import only this module.
export { NETWORK_PRESETS, PRESET_NAMES, type NetworkPreset } from './presets.js';
export {
  AllowEntry,
  AllowRule,
  EnvironmentNetwork,
  NetworkBody,
  type NetworkPhase,
  PhaseNetwork,
  PhaseNetworkBody,
} from './schemas.js';
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
export { EgressProxy, type EgressLease } from './proxy/supervisor.js';
export type { ProxySettings, Refusal, RefusalReason } from './proxy/protocol.js';
export {
  type AccountEvent,
  RefusalAccount,
  type RefusalEntry,
  refusalsFromEvents,
  refusalsMarkdown,
} from './account.js';
export { RefusalEntrySchema } from './schemas.js';
export { countRefusal } from './metrics.js';
export { RunNetwork, type RunNetworkOptions } from './run-network.js';
export {
  type SpawnNetwork,
  setWorkspaceNetwork,
  withWorkspaceNetwork,
  workspaceNetwork,
} from './workspace-networks.js';
