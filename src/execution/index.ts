// The public surface of the execution slice: other slices and the composition root import only this module.
export type { EngineContext, ExecutionContext } from './context.js';
export { Engine } from './engine.js';
export { EnginePresence } from './engine-presence.js';
export { TakebackLoop } from './takeback-loop.js';
export { Execution } from './executor.js';
export { eventReader, transcriptFormat } from './harness-run.js';
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
} from './ledger.js';
export { resolveRunModel } from './run-model.js';
export {
  activeModelMeter,
  type MeteredUsage,
  type MeterReservation,
  teamHeld,
  type TeamBudgetState,
} from './model-meter.js';
export {
  allowRunUserToWorkspaces,
  blockingDirectory,
  describeBlocking,
  holdRunReadableFiles,
  placeWorkspaces,
  resolveSandboxMode,
  runUserWarning,
  WorkspaceRootUnreachable,
} from './sandbox/index.js';
export { containerPolicy } from './container-policy.js';
export {
  conversationHistory,
  engineAlive,
  runAttachments,
  type RunFile,
  usageBefore,
  workspacesInUse,
} from './store.js';
export { TaskTokens } from './task-token.js';
export { sandboxHiddenPaths, Workspaces } from './workspace.js';
export { EngineWrites } from './writes.js';
export { warmStartsFor, WarmStarts } from './warm/index.js';
