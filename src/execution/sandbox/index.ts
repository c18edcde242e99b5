export { scrubbedEnvironment } from './environment.js';
export {
  resolveSandboxMode,
  resolveServerSandbox,
  sandboxStatus,
  type SandboxPolicy,
  type SandboxStatus,
  type ServerSandbox,
} from './mode.js';
export { allowRunUserToWorkspaces, runUserWarning } from './run-user.js';
export { blockingDirectory, describeBlocking, placeWorkspaces, WorkspaceRootUnreachable } from './workspace-root.js';
export { LineSplitter } from './process-output.js';
export { holdRunReadableFiles } from './run-readable-file.js';
export { containerEngineCheck } from './container/host-paths.js';
export { spawnSandboxed } from './backend.js';
export type {
  RunUser,
  SandboxBackend,
  SandboxCapabilities,
  SandboxExit,
  SandboxMode,
  SandboxSpawnOptions,
  SandboxedProcess,
} from './backend.js';
