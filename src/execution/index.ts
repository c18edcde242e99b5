// The public surface of the execution slice: other slices and the composition root import only this module.
export type { EngineContext, ExecutionContext } from './run/context.js';
export { Engine } from './engine/engine.js';
export { EnginePresence } from './engine/presence.js';
export { TakebackLoop } from './engine/takeback-loop.js';
export { Execution } from './run/executor.js';
export { eventReader, transcriptFormat } from './run/harness-run.js';
export { PROXY_PROVIDERS } from './harnesses/cli/proxied.js';
export { AGENT_CLIS, locateBinary } from './harnesses/cli/index.js';
export { HarnessStartError, type Harness, type TranscriptLine } from './harnesses/harness.js';
export { parseEvent, type HarnessEvent } from '../runs/index.js';
export { configuredHarnesses } from './harnesses/registry.js';
export {
  DatabaseLedger,
  runVariables,
  type ArtifactSink,
  type EnvironmentSetups,
  type FollowupInput,
  type RunLedger,
} from './run/ledger.js';
export { resolveRunModel } from './model/run-model.js';
export {
  activeModelMeter,
  type MeteredUsage,
  type MeterReservation,
  teamHeld,
  type TeamBudgetState,
} from './model/meter.js';
export {
  allowRunUserToWorkspaces,
  blockingDirectory,
  describeBlocking,
  holdRunReadableFiles,
  placeWorkspaces,
  resolveSandboxMode,
  resolveServerSandbox,
  runUserWarning,
  containerEngineCheck,
  sandboxStatus,
  WorkspaceRootUnreachable,
} from './sandbox/index.js';
export { containerPolicy } from './sandbox/container/policy.js';
export {
  conversationHistory,
  engineAlive,
  runAttachments,
  type RunFile,
  usageBefore,
  workspacesInUse,
} from './engine/store.js';
export { TaskTokens } from './engine/task-token.js';
export { ExecutionCredentials } from './kubernetes/credential.js';
export { KubernetesEngine } from './kubernetes/engine.js';
export { kubernetesEngineFor } from './kubernetes/from-config.js';
export { sandboxHiddenPaths, Workspaces } from './workspace/workspace.js';
export { EngineWrites } from './engine/writes.js';
export { warmStartsFor, WarmStarts } from './warm/index.js';
