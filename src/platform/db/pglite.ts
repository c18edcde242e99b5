// PGlite opened the one way Hangar opens it, in the server and in the child that creates its directory
// (pglite-init.ts).

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { execFileAsync } from '../spawn/index.js';

/**
 * PGlite keeps its whole WebAssembly memory resident: PostgreSQL's default shared_buffers (128 MB) made an idle
 * server about 410 MB, 32 MB about 300 MB (bench/idle-memory, HANGAR_PGLITE_SHARED_BUFFERS_MB). The pages PGlite
 * reads go through the file system, so the operating system's cache still holds what does not fit.
 */
export const DEFAULT_PGLITE_SHARED_BUFFERS_MB = 32;

export function openPglite(directory: string, sharedBuffersMb: number): Promise<PGlite> {
  return PGlite.create(directory, {
    extensions: { pg_trgm },
    startParams: [...PGlite.defaultStartParams, '-c', `shared_buffers=${sharedBuffersMb}MB`],
  });
}

/** Creates the database directory in a child process when it has none yet (see pglite-init.ts for why). */
export async function initialisePglite(directory: string, sharedBuffersMb: number): Promise<void> {
  if (fs.existsSync(path.join(directory, 'PG_VERSION'))) return;
  const here = fileURLToPath(import.meta.url);
  // Run from the TypeScript sources (tests, benchmarks), the child needs the same loader.
  const typescript = path.extname(here) === '.ts';
  const script = path.join(path.dirname(here), `pglite-init${path.extname(here)}`);
  try {
    await execFileAsync(
      process.execPath,
      [...(typescript ? ['--import', 'tsx'] : []), script, directory, String(sharedBuffersMb)],
      { maxBuffer: 4 * 1024 * 1024 },
    );
  } catch (error) {
    const { stderr } = error as { stderr?: string };
    throw new Error(
      `could not create the embedded database in ${directory}: ${stderr?.trim() || (error as Error).message}`,
    );
  }
}
