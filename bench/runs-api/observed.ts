// One side of bench/runs-api/observability.ts: a server observed as BENCH_OBSERVE says (off, metrics, tracing) on
// a scratch PostgreSQL database, under the runs API's create and list load. Prints
// `create: N req/s, X ms server CPU, Y ms PostgreSQL CPU per request; list: ...` and, with tracing, the receiver's CPU.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { loadConfig } from '../../src/config.js';
import { startServer } from '../../src/server.js';
import { observation, observer } from '../observability/observe.js';
import { CREATE_BODY } from './baseline.js';
import { createScratchDatabase } from './database.js';
import { type Figures, type LoadSettings, measure } from './load.js';

const adminUrl = process.env.BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const load: LoadSettings = {
  connections: Number(process.env.BENCH_CONNECTIONS || 20),
  durationSeconds: Number(process.env.BENCH_DURATION || 8),
  // Seconds of load before each measurement (BENCH_WARMUP): a process with tracing or metrics has more code to
  // load and compile in its first seconds, which a long-running server pays once.
  warmupSeconds: Number(process.env.BENCH_WARMUP || 2),
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
    // The scratch database's backends (this server's connections), for PostgreSQL's CPU per request.
    const backends = async () =>
      (
        await sql<{ pid: number }>`SELECT pid FROM pg_stat_activity WHERE datname = current_database()`.execute(
          server.database.db,
        )
      ).rows.map((row) => row.pid);
    const create = await measure(
      {
        baseUrl: server.url,
        requests: [{ method: 'POST', path: '/api/v1/agent/runs', headers, body: CREATE_BODY }],
        backends,
      },
      load,
    );
    // The creates filled a table the planner still thinks empty (autovacuum analyzes it within a minute on a real
    // server): without fresh statistics each list sorted all of the team's runs, 40-60 ms instead of 5.
    await sql`ANALYZE runs`.execute(server.database.db);
    const list = await measure(
      { baseUrl: server.url, requests: [{ method: 'GET', path: '/api/v1/agent/runs?limit=20', headers }], backends },
      load,
    );
    const figures = (name: string, measured: Figures) =>
      `${name}: ${measured.requestsPerSecond.toFixed(1)} req/s, ${measured.serverCpuMs?.toFixed(3)} ms server CPU, ` +
      `${measured.postgresCpuMs?.toFixed(3)} ms PostgreSQL CPU per request`;
    console.log(`${figures('create', create)}; ${figures('list', list)}`);
  } finally {
    await server.stop();
  }
} finally {
  const received = await observed.stop();
  if (received) console.log(received);
  fs.rmSync(dataDir, { recursive: true, force: true });
  await scratch.drop();
}
