export { scrubbedEnvironment } from './environment.js';
export { resolveSandboxMode, type SandboxPolicy } from './mode.js';
export { allowRunUserToWorkspaces, runUserWarning } from './run-user.js';
export { blockingDirectory, describeBlocking, placeWorkspaces, WorkspaceRootUnreachable } from './workspace-root.js';
export { LineSplitter } from './process-output.js';
export { holdRunReadableFiles } from './run-readable-file.js';
export { spawnSandboxed } from './spawn.js';
export type { RunUser, SandboxExit, SandboxMode, SandboxSpawnOptions, SandboxedProcess } from './backend.js';
