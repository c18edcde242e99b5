// Every process Hangar starts goes through here (scripts/check-spawns.mjs keeps it so).
export { execFileAsync, type ExecFileOptions, type ExecFileResult, failureOf } from './exec-file.js';
export {
  currentSpawner,
  spawnProcess,
  started,
  startSpawner,
  stopSpawner,
  type StartedProcess,
} from './process.js';
export type { SpawnOptions } from './protocol.js';
