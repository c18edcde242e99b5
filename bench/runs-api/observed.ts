// One side of bench/runs-api/observability.ts: a server observed as BENCH_OBSERVE says (off, metrics, tracing) on
// a scratch PostgreSQL database, under the runs API's create and list load. Prints `create: N req/s, list: M req/s`.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config.js';
import { startServer } from '../../src/server.js';
import { observation, observer } from '../observability/observe.js';
import { CREATE_BODY } from './baseline.js';
import { createScratchDatabase } from './database.js';
import { measure, type LoadSettings } from './load.js';

const adminUrl = process.env.BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const load: LoadSettings = {
  connections: Number(process.env.BENCH_CONNECTIONS || 20),
  durationSeconds: Number(process.env.BENCH_DURATION || 8),
  warmupSeconds: 2,
  maxOthersCpuPercent: 100_000,
  attempts: 1,
};

const observed = await observer(observation());
const scratch = await createScratchDatabase(adminUrl);
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-bench-observed-'));
const apiKey = `hgr_bench_${randomBytes(16).toString('hex')}`;
try {
  // No harness and no model: runs stay queued, so only the API and its writes are measured.
  const server = await startServer(
    loadConfig({
      PORT: '0',
      HANGAR_DATA_DIR: dataDir,
      HANGAR_BOOTSTRAP_API_KEY: apiKey,
      HANGAR_LOG_LEVEL: 'silent',
      DATABASE_URL: scratch.url,
      ...observed.env,
    }),
    { logger: false },
  );
  observed.watch(server);
  try {
    const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
    const backends = async () => [];
    const create = await measure(
      {
        baseUrl: server.url,
        requests: [{ method: 'POST', path: '/api/v1/agent/runs', headers, body: CREATE_BODY }],
        backends,
      },
      load,
    );
    const list = await measure(
      { baseUrl: server.url, requests: [{ method: 'GET', path: '/api/v1/agent/runs?limit=20', headers }], backends },
      load,
    );
    console.log(
      `create: ${create.requestsPerSecond.toFixed(1)} req/s, list: ${list.requestsPerSecond.toFixed(1)} req/s`,
    );
  } finally {
    await server.stop();
  }
} finally {
  await observed.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
  await scratch.drop();
}
