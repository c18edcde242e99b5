export { scrubbedEnvironment } from './environment.js';
export { resolveSandboxMode } from './mode.js';
export { LineSplitter, spawnSandboxed } from './spawn.js';
export type { SandboxExit, SandboxMode, SandboxSpawnOptions, SandboxedProcess } from './types.js';
