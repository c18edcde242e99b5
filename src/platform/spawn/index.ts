// Every process Hangar starts goes through here (scripts/check-spawns.mjs keeps it so).
export { type ExecFileOptions, type ExecFileResult, execFileAsync, failureOf } from './exec-file.js';
export {
  currentSpawner,
  type StartedProcess,
  spawnProcess,
  started,
  startSpawner,
  stopSpawner,
} from './process.js';
export type { SpawnOptions } from './protocol.js';
