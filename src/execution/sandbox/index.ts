export type {
  RunUser,
  SandboxBackend,
  SandboxCapabilities,
  SandboxExit,
  SandboxedProcess,
  SandboxMode,
  SandboxSpawnOptions,
} from './backend.js';
export { spawnSandboxed } from './backend.js';
export { containerEngineCheck } from './container/host-paths.js';
export { scrubbedEnvironment } from './environment.js';
export {
  resolveSandboxMode,
  resolveServerSandbox,
  type SandboxPolicy,
  type SandboxStatus,
  type ServerSandbox,
  sandboxStatus,
} from './mode.js';
export { LineSplitter } from './process-output.js';
export { holdRunReadableFiles } from './run-readable-file.js';
export { allowRunUserToWorkspaces, runUserWarning } from './run-user.js';
export { blockingDirectory, describeBlocking, placeWorkspaces, WorkspaceRootUnreachable } from './workspace-root.js';
