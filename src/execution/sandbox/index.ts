export { scrubbedEnvironment } from './environment.js';
export { resolveSandboxMode, type SandboxPolicy } from './mode.js';
export { allowRunUserToWorkspaces, runUserWarning } from './run-user.js';
export { LineSplitter } from './process-output.js';
export { spawnSandboxed } from './spawn.js';
export type { RunUser, SandboxExit, SandboxMode, SandboxSpawnOptions, SandboxedProcess } from './types.js';
