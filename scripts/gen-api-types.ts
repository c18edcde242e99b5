// Writes web/src/api/schema.d.ts from the OpenAPI document of a server started for it: API role only (no engine
// or loops), PGlite in a temporary directory, the default configuration (not this shell's HANGAR_* variables).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config.js';
import { startServer } from '../src/server.js';
import { API_TYPES_FILE, apiTypes } from './api-types.js';

async function main(): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-api-types-'));
  try {
    const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', HANGAR_DATA_DIR: dataDir, HANGAR_LOG_LEVEL: 'silent' });
    const server = await startServer(config, { logger: false, role: 'api' });
    let document: unknown;
    try {
      const response = await fetch(`${server.url}/api/v1/openapi.json`);
      if (!response.ok) throw new Error(`GET /api/v1/openapi.json answered HTTP ${response.status}`);
      document = await response.json();
    } finally {
      await server.stop();
    }
    fs.writeFileSync(API_TYPES_FILE, await apiTypes(document));
    process.stdout.write(`wrote ${path.relative(process.cwd(), API_TYPES_FILE)}\n`);
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
