// The public surface of the execution slice: other slices and the composition root import only this module.

export { type HarnessEvent, parseEvent } from '../runs/index.js';
export { Engine } from './engine/engine.js';
export { EnginePresence } from './engine/presence.js';
export {
  conversationHistory,
  engineAlive,
  type RunFile,
  runAttachments,
  usageBefore,
  workspacesInUse,
} from './engine/store.js';
export { TakebackLoop } from './engine/takeback-loop.js';
export { TaskTokens } from './engine/task-token.js';
export { EngineWrites } from './engine/writes.js';
export { AGENT_CLIS, locateBinary } from './harnesses/cli/index.js';
export { PROXY_PROVIDERS } from './harnesses/cli/proxied.js';
export { type Harness, HarnessStartError, type TranscriptLine } from './harnesses/harness.js';
export { configuredHarnesses } from './harnesses/registry.js';
export { ExecutionCredentials } from './kubernetes/credential.js';
export { KubernetesEngine } from './kubernetes/engine.js';
export { kubernetesEngineFor } from './kubernetes/from-config.js';
export {
  activeModelMeter,
  type MeteredUsage,
  type MeterReservation,
  type TeamBudgetState,
  teamHeld,
} from './model/meter.js';
export { resolveRunModel } from './model/run-model.js';
export type { EngineContext, ExecutionContext } from './run/context.js';
export { Execution } from './run/executor.js';
export { eventReader, transcriptFormat } from './run/harness-run.js';
export {
  type ArtifactSink,
  DatabaseLedger,
  type EnvironmentSetups,
  type FollowupInput,
  type RunLedger,
  runVariables,
} from './run/ledger.js';
export { containerPolicy } from './sandbox/container/policy.js';
export {
  allowRunUserToWorkspaces,
  blockingDirectory,
  containerEngineCheck,
  describeBlocking,
  holdRunReadableFiles,
  placeWorkspaces,
  resolveSandboxMode,
  resolveServerSandbox,
  runUserWarning,
  sandboxStatus,
  WorkspaceRootUnreachable,
} from './sandbox/index.js';
export { WarmStarts, warmStartsFor } from './warm/index.js';
export { sandboxHiddenPaths, Workspaces } from './workspace/workspace.js';
