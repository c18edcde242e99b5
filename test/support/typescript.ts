import { fileURLToPath } from 'node:url';

/**
 * Node's arguments for `hangar` run from this checkout's sources (a server, a worker, a CLI verb), before the verb
 * and its arguments: the loader the suite itself runs with (scripts/ts-loader.mjs), then src/main.ts.
 */
export const HANGAR_FROM_SOURCES = [
  '--import',
  fileURLToPath(new URL('../../scripts/ts-loader.mjs', import.meta.url)),
  fileURLToPath(new URL('../../src/main.ts', import.meta.url)),
];
