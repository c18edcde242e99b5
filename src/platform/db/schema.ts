// Until the run lifecycle move declares the runs, execution and workers tables in their slices, and the files
// that take DB from here (runs/, execution/store.ts and the others the lifecycle helper owns, server.ts, the test
// server and the benchmarks) take it from src/database.ts, this file re-exports them; then it goes.
export type * from './run-tables.js';
export type * from './tables.js';
export type { DB } from '../../database.js';
