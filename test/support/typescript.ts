import { fileURLToPath } from 'node:url';

/**
 * Node's arguments for a process that runs this checkout's TypeScript sources (a server, a worker, a CLI verb):
 * the loader the suite itself runs with (scripts/ts-loader.mjs).
 */
export const TYPESCRIPT = ['--import', fileURLToPath(new URL('../../scripts/ts-loader.mjs', import.meta.url))];
