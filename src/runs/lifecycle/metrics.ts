import { type Kysely, type RawBuilder, sql } from 'kysely';
import { Counter, Histogram } from 'prom-client';
import type { DB } from '../../database.js';
import { BoundedLabel, metricsRegistry, metricsServed, RUN_SECONDS_BUCKETS } from '../../platform/metrics.js';
import type { NewRun } from './types.js';

/**
 * The run lifecycle's metrics. Every run is created, claimed, started and ended through RunLifecycle, whether the
 * server's engine or a self-hosted worker executes it, so its counters are complete on whichever replica wrote the
 * move. No label names a run, a user or a team; harnesses, models and error codes are bounded (BoundedLabel).
 */

const registers = [metricsRegistry];
const harnesses = new BoundedLabel(32);
const sources = new BoundedLabel(16);
const errorCodes = new BoundedLabel(64);
const models = new BoundedLabel(64);

const created = new Counter({
  name: 'hangar_runs_created_total',
  help: 'Runs created, by source (API, SCHEDULED_AGENT, ...) and harness',
  labelNames: ['source', 'harness'] as const,
  registers,
});

const claimed = new Counter({
  name: 'hangar_runs_claimed_total',
  help: "Runs taken from the queue, by executor (the server's engine, or a self-hosted worker)",
  labelNames: ['executor'] as const,
  registers,
});

const started = new Counter({
  name: 'hangar_runs_started_total',
  help: 'Executions whose agent started (CLAIMED -> INPROGRESS), by harness',
  labelNames: ['harness'] as const,
  registers,
});

const ended = new Counter({
  name: 'hangar_runs_ended_total',
  help: 'Runs ended, by end state, error_code (none for a success), harness and source',
  labelNames: ['state', 'error_code', 'harness', 'source'] as const,
  registers,
});

const queueWait = new Histogram({
  name: 'hangar_run_queue_wait_seconds',
  help: 'Time from a run being queued (created) to it being claimed, by executor',
  labelNames: ['executor'] as const,
  buckets: RUN_SECONDS_BUCKETS,
  registers,
});

const agentTime = new Histogram({
  name: 'hangar_run_agent_seconds',
  help: "Time from a run's agent starting to its end, by harness and end state",
  labelNames: ['harness', 'state'] as const,
  buckets: RUN_SECONDS_BUCKETS,
  registers,
});

const runTime = new Histogram({
  name: 'hangar_run_duration_seconds',
  help: 'Time from a run being created to its end, by end state',
  labelNames: ['state'] as const,
  buckets: RUN_SECONDS_BUCKETS,
  registers,
});

const setupTime = new Histogram({
  name: 'hangar_run_setup_seconds',
  help: "Time from a run's claim to its agent starting: workspace, clone, environment setup commands, harness start (as its executor, the server's engine or a worker, reports it)",
  buckets: RUN_SECONDS_BUCKETS,
  registers,
});

const renewals = new Counter({
  name: 'hangar_lease_renewals_total',
  help: 'Run leases renewed by their executor',
  registers,
});

const expiries = new Counter({
  name: 'hangar_lease_expiries_total',
  help: 'Runs taken back from an executor that stopped renewing their lease or is gone',
  registers,
});

const tokens = new Counter({
  name: 'hangar_model_tokens_total',
  help: 'Tokens used by executions, counted as each ends (also one that follow-ups continue), by model and direction (input, output)',
  labelNames: ['model', 'direction'] as const,
  registers,
});

const cost = new Counter({
  name: 'hangar_inference_cost_usd_total',
  help: 'Inference cost of executions in US dollars, counted as each ends, by model',
  labelNames: ['model'] as const,
  registers,
});

/**
 * `to - from` in seconds, as a float the database computes: the run figures' durations are read this way for every
 * claimed and ended run, and a float parses for a fraction of what a timestamp costs (both ends are then also the
 * database's clock). `from` and `to` are SQL expressions of Hangar's own (column names, `clock_timestamp()`).
 */
export function secondsBetween(from: string, to = 'clock_timestamp()'): RawBuilder<number | null> {
  return sql.raw<number | null>(`extract(epoch FROM ${to} - ${from})::float8`);
}

export function observeCreated(runs: readonly NewRun[]): void {
  for (const run of runs) {
    const harness = (run.agent_config.harness as { type?: string } | undefined)?.type;
    created.inc({ source: sources.of(run.source), harness: harnesses.of(harness ?? 'default') });
  }
}

export function observeStarted(harness: string | undefined, setupSeconds: number | undefined): void {
  started.inc({ harness: harnesses.of(harness ?? 'default') });
  // A worker's figure: only a sane one (it comes over the wire).
  if (typeof setupSeconds === 'number' && Number.isFinite(setupSeconds) && setupSeconds >= 0)
    setupTime.observe(setupSeconds);
}

export function observeRenewals(count: number): void {
  if (count > 0) renewals.inc(count);
}

export function observeExpiries(count: number): void {
  if (count > 0) expiries.inc(count);
}

/**
 * Claimed runs and how long they waited (in the background: the claim does not wait for its figures). Both claims
 * return each run's queue wait while /metrics is served (the engine's reads it beside its claim function, see
 * claims.ts); a run without one is read here, in one statement for the batch.
 */
export function observeClaimed(
  db: Kysely<DB>,
  executor: 'engine' | 'worker',
  runs: Array<{ id: string; queued_seconds?: number | null }>,
): void {
  void claimedRuns(db, executor, runs).catch(() => undefined);
}

async function claimedRuns(
  db: Kysely<DB>,
  executor: 'engine' | 'worker',
  runs: Array<{ id: string; queued_seconds?: number | null }>,
): Promise<void> {
  if (runs.length === 0) return;
  claimed.inc({ executor }, runs.length);
  if (!metricsServed()) return;
  let waits = runs.flatMap((run) => (typeof run.queued_seconds === 'number' ? [run.queued_seconds] : []));
  if (waits.length < runs.length) {
    const rows = await sql<{ queued_seconds: number }>`
      SELECT ${secondsBetween('created_at')} AS queued_seconds FROM runs WHERE id = ANY(${runs.map((run) => run.id)}::text[])`.execute(
      db,
    );
    waits = rows.rows.map((row) => row.queued_seconds);
  }
  const observe = queueWait.labels(executor);
  for (const wait of waits) observe.observe(Math.max(0, wait));
}

/**
 * An execution that ended: its run's end state, and when given, the error code and the execution's usage. With
 * `continued`, the run did not end (follow-ups started its next execution): only the usage counts.
 */
export interface EndedRun {
  id: string;
  state: string;
  errorCode?: string | undefined;
  usage?: Record<string, number> | null | undefined;
  continued?: boolean;
}

/**
 * Counts ended runs (in the background, like claims). Their harness, source, model and times are columns of the
 * run: the engine's batched end returns them with the end while /metrics is served (`columns`, see finish.ts);
 * otherwise they are read in one statement per batch of ends when /metrics is served (a failure to read them
 * loses the figures, never the end).
 */
export function observeEnded(db: Kysely<DB>, runs: EndedRun[], columns?: ReadonlyMap<string, EndedColumns>): void {
  void endedRuns(db, runs, columns).catch(() => undefined);
}

async function endedRuns(db: Kysely<DB>, runs: EndedRun[], given?: ReadonlyMap<string, EndedColumns>): Promise<void> {
  if (runs.length === 0) return;
  const columns = new Map<string, EndedColumns>(given);
  const missing = runs.filter((run) => !columns.has(run.id)).map((run) => run.id);
  if (metricsServed() && missing.length > 0) {
    const rows = await sql<EndedColumns>`
      SELECT id, source, harness, model_id, ${secondsBetween('created_at', 'ended_at')} AS run_seconds,
        ${secondsBetween('started_at', 'ended_at')} AS agent_seconds
      FROM runs WHERE id = ANY(${missing}::text[])`
      .execute(db)
      .catch(() => ({ rows: [] as EndedColumns[] }));
    for (const row of rows.rows) columns.set(row.id, row);
  }
  for (const run of runs) {
    const row = columns.get(run.id);
    if (run.continued) {
      observeUsage(row?.model_id ?? null, run.usage);
      continue;
    }
    // Without its row (not read, or gone) the harness is unknown; a run no harness took has none.
    const harness = row ? harnesses.of(row.harness) : 'unknown';
    const state = run.state;
    ended.inc({
      state,
      error_code: errorCodes.of(run.errorCode),
      harness,
      source: sources.of(row?.source ?? 'unknown'),
    });
    if (typeof row?.run_seconds !== 'number') continue;
    runTime.observe({ state }, Math.max(0, row.run_seconds));
    if (row.agent_seconds !== null) agentTime.observe({ harness, state }, Math.max(0, row.agent_seconds));
    observeUsage(row.model_id, run.usage);
  }
}

/** The columns of an ended run its figures come from, its durations in seconds (secondsBetween). */
export interface EndedColumns {
  id: string;
  source: string;
  harness: string | null;
  model_id: string | null;
  /** Created to ended; null while the run has no end time. */
  run_seconds: number | null;
  /** Agent started to ended; null when no agent started. */
  agent_seconds: number | null;
}

function observeUsage(modelId: string | null, usage: Record<string, number> | null | undefined): void {
  if (!usage) return;
  const model = models.of(modelId ?? 'unknown');
  // A harness reports these; anything but a positive number is no figure (a counter only goes up).
  if (positive(usage.input_tokens)) tokens.inc({ model, direction: 'input' }, usage.input_tokens);
  if (positive(usage.output_tokens)) tokens.inc({ model, direction: 'output' }, usage.output_tokens);
  if (positive(usage.inference_cost)) cost.inc({ model }, usage.inference_cost);
}

function positive(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0;
}
