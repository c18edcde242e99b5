// Benchmark of the webhook ingress (POST /webhooks/w/<uid>, Standard Webhooks signed, unique delivery IDs)
// against the runs-api's bare validate-and-insert baseline (POST /runs) measured in the same run on the same
// scratch database. See bench/README.md for how to run it and bench/RESULTS.md for figures.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { loadConfig } from '../../src/config.js';
import { type RunningServer, startServer } from '../../src/server.js';
import { CREATE_BODY, startBaseline } from '../runs-api/baseline.js';
import { createScratchDatabase, defaultOwner, poolQuery, type Query } from '../runs-api/database.js';
import { type Load, type LoadSettings, measure } from '../runs-api/load.js';
import { type Comparison, markdownTable, progressLine, ratio, TARGET_RATIO } from '../runs-api/report.js';
import { type SignerConfig, type SignerTally, signedHeaders, signingKey } from './signer.js';

function wholeNumber(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a whole number, got "${raw}"`);
  return value;
}

const settings = {
  databaseUrl: process.env.BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test',
  /** Ours then the baseline, this many times: on a shared machine one pair alone says little about the spread. */
  rounds: Math.max(1, wholeNumber('BENCH_ROUNDS', 2)),
  load: {
    connections: wholeNumber('BENCH_CONNECTIONS', 50),
    durationSeconds: wholeNumber('BENCH_DURATION', 10),
    warmupSeconds: wholeNumber('BENCH_WARMUP', 2),
    maxOthersCpuPercent: wholeNumber('BENCH_MAX_NOISE', 15),
    attempts: wholeNumber('BENCH_ATTEMPTS', 3),
  } satisfies LoadSettings,
};

/**
 * The sender limits, raised so that they are not what is measured (the configuration's maximum: one million per
 * sender and minute, about 16,700 deliveries/s; every request here comes from 127.0.0.1, one sender).
 */
const RAISED_LIMIT = '1000000';

/** A typical event, about the size of the baseline's create body (197 bytes against 215). */
const DELIVERY_BODY = JSON.stringify({
  type: 'invoice.paid',
  timestamp: '2026-11-22T05:28:00.000Z',
  data: {
    invoice_id: 'in_1PqR7sT2uV3wX4yZ',
    customer: 'cus_acme_billing',
    amount_cents: 129900,
    currency: 'eur',
    lines: 3,
    paid: true,
  },
});

/** Everything started is stopped in reverse order, on success, failure or Ctrl-C. */
const cleanups: (() => Promise<unknown>)[] = [];
async function cleanUp(): Promise<void> {
  for (let next = cleanups.pop(); next; next = cleanups.pop()) {
    await next().catch((error: unknown) => console.error('cleanup step failed:', error));
  }
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => void cleanUp().finally(() => process.exit(130)));
}

/** The real server, in this process, as `hangar serve` would start it, with the sender limits raised. */
async function startHangar(
  databaseUrl: string,
): Promise<{ server: RunningServer; apiKey: string; query: Query; backends: () => Promise<number[]> }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-bench-'));
  cleanups.push(async () => fs.rmSync(dataDir, { recursive: true, force: true }));
  const apiKey = `hgr_bench_${randomBytes(16).toString('hex')}`;
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    HANGAR_DATA_DIR: dataDir,
    HANGAR_BOOTSTRAP_API_KEY: apiKey,
    HANGAR_LOG_LEVEL: 'silent',
    DATABASE_URL: databaseUrl,
    HANGAR_WEBHOOK_RATE_PER_MINUTE: RAISED_LIMIT,
    HANGAR_WEBHOOK_AUTH_FAILURES_PER_MINUTE: RAISED_LIMIT,
  });
  const server = await startServer(config);
  cleanups.push(() => server.stop());
  // The baseline's pool: the same size as Hangar's.
  const pool = new pg.Pool({ connectionString: databaseUrl, max: config.dbPoolSize });
  cleanups.push(() => pool.end());
  const query = poolQuery(pool);
  const local = ['127.0.0.1', 'localhost', '[::1]', ''].includes(new URL(databaseUrl).hostname);
  const backends = async () =>
    local
      ? (await query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = current_database()')).map(
          (row) => row.pid,
        )
      : [];
  return { server, apiKey, query, backends };
}

/** A Standard Webhooks webhook, created through the API as a user would. */
async function createWebhook(server: RunningServer, apiKey: string): Promise<{ path: string; secret: string }> {
  const response = await fetch(`${server.url}/api/v1/factory/webhooks`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'bench', auth_mode: 'signature', signature_scheme: 'standard_webhooks' }),
  });
  const body = (await response.json()) as { uid?: string; url?: string; secret?: string };
  if (response.status !== 201 || !body.url || !body.secret) {
    throw new Error(`creating the webhook answered ${response.status}: ${JSON.stringify(body).slice(0, 300)}`);
  }
  // The URL carries the configured public address; the server listens on a port chosen at start.
  return { path: new URL(body.url).pathname, secret: body.secret };
}

/** Fails early, with the answer, if a side does not accept a request: a fast error is not a fast ingress. */
async function expectStatus(url: string, init: RequestInit, status: number): Promise<string> {
  const response = await fetch(url, { method: 'POST', ...init });
  const text = await response.text();
  if (response.status !== status)
    throw new Error(`POST ${url} answered ${response.status} (expected ${status}): ${text.slice(0, 300)}`);
  return text;
}

/** Counts of every answer the load generator got from the ingress, over all its runs (warm-ups included). */
class Tallies {
  sent = 0;
  readonly acknowledged: string[] = [];
  readonly others: Record<string, number> = {};

  add = (tally: unknown): void => {
    const { sent, acknowledged, others } = tally as SignerTally;
    this.sent += sent;
    for (const id of acknowledged) this.acknowledged.push(id);
    for (const [status, count] of Object.entries(others)) this.others[status] = (this.others[status] ?? 0) + count;
    // Any answer but 202 fails the benchmark (2xx ones too, which the load generator would let through).
    if (Object.keys(others).length > 0)
      throw new Error(`the ingress answered other than 202: ${JSON.stringify(others)}`);
  };
}

/**
 * Nothing acknowledged is lost: every delivery ID answered 202 is an Accepted row, and no other row was written.
 * Accepted rows can outnumber the 202s by the requests still in flight when a run of the load generator ended
 * (the server commits them, the generator no longer reads the answer); never by more than those.
 */
async function checkDeliveries(query: Query, tallies: Tallies): Promise<string> {
  const acknowledged = new Set(tallies.acknowledged);
  if (acknowledged.size !== tallies.acknowledged.length) throw new Error('the same delivery ID was acknowledged twice');
  const [counts] = await query<{ accepted: string; other: string; found: string }>(
    `SELECT count(*) FILTER (WHERE status = 'Accepted') AS accepted,
            count(*) FILTER (WHERE status <> 'Accepted') AS other,
            count(*) FILTER (WHERE status = 'Accepted' AND delivery_id = ANY($1::text[])) AS found
     FROM webhook_deliveries`,
    [[...acknowledged]],
  );
  const accepted = Number(counts!.accepted);
  const found = Number(counts!.found);
  const unanswered = tallies.sent - tallies.acknowledged.length;
  const summary =
    `${acknowledged.size} deliveries answered 202, ${found} of them Accepted rows; ${accepted} Accepted rows in all ` +
    `(${accepted - found} from the ${unanswered} requests still in flight when a load run ended), ${counts!.other} other rows`;
  if (found !== acknowledged.size || Number(counts!.other) > 0 || accepted - found > unanswered) {
    throw new Error(`deliveries check FAILED: ${summary}`);
  }
  return summary;
}

async function main(): Promise<void> {
  const { connections, durationSeconds, warmupSeconds } = settings.load;
  console.log(
    `webhook ingress benchmark: ${os.cpus().length} cores, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}, ` +
      `${connections} connections, ${warmupSeconds} s warm-up + ${durationSeconds} s per measurement, ` +
      `${settings.rounds} round(s), ${new Date().toISOString()}`,
  );
  const scratch = await createScratchDatabase(settings.databaseUrl);
  cleanups.push(() => scratch.drop());
  const { server, apiKey, query, backends } = await startHangar(scratch.url);
  const [version] = await query<{ server_version: string }>('SHOW server_version');
  console.log(`PostgreSQL ${version?.server_version}, scratch database ${new URL(scratch.url).pathname.slice(1)}`);

  const webhook = await createWebhook(server, apiKey);
  const baseline = await startBaseline(query, await defaultOwner(server.database.db));
  cleanups.push(() => baseline.close());

  const tallies = new Tallies();
  const json = { 'content-type': 'application/json' };
  // One delivery by hand first, signed the same way: a wrong signature fails here, with the server's reason.
  const first = await expectStatus(
    `${server.url}${webhook.path}`,
    { headers: { ...json, ...signedHeaders(signingKey(webhook.secret), DELIVERY_BODY) }, body: DELIVERY_BODY },
    202,
  );
  tallies.add({
    sent: 1,
    acknowledged: [(JSON.parse(first) as { delivery_id: string }).delivery_id],
    others: {},
  } satisfies SignerTally);
  await expectStatus(`${baseline.url}/runs`, { headers: json, body: CREATE_BODY }, 200);

  const ours: Load = {
    baseUrl: server.url,
    requests: [{ method: 'POST', path: webhook.path, headers: json, body: DELIVERY_BODY }],
    backends,
    hooks: {
      module: new URL('./signer.ts', import.meta.url).href,
      config: { secret: webhook.secret } satisfies SignerConfig,
      onTally: tallies.add,
    },
  };
  const theirs: Load = {
    baseUrl: baseline.url,
    requests: [{ method: 'POST', path: '/runs', headers: json, body: CREATE_BODY }],
    backends,
  };

  const comparisons: Comparison[] = [];
  for (let round = 1; round <= settings.rounds; round++) {
    const comparison: Comparison = {
      database: 'PostgreSQL',
      runs: undefined,
      scenario: `POST webhook delivery (Standard Webhooks)${settings.rounds > 1 ? `, round ${round}` : ''}`,
      ours: await measure(ours, settings.load),
      baseline: await measure(theirs, settings.load),
    };
    console.log(progressLine(comparison));
    comparisons.push(comparison);
  }

  console.log(`deliveries check: ${await checkDeliveries(query, tallies)}`);
  console.log(`\n${markdownTable(comparisons)}`);
  const ratios = comparisons.map(ratio);
  const worst = Math.min(...ratios);
  console.log(
    `\nratio accepted deliveries/s : baseline creates/s: ${ratios.map((r) => r.toFixed(2)).join(', ')}; ` +
      `target >= ${TARGET_RATIO}: ${worst >= TARGET_RATIO ? 'met' : Math.max(...ratios) >= TARGET_RATIO ? 'met in some rounds only' : 'MISSED'}`,
  );
}

try {
  await main();
} finally {
  await cleanUp();
}
