import type { Kysely } from 'kysely';
import { cleanIndexes, type VacuumStatement, vacuumTables } from './vacuum.js';

/**
 * PGlite's ANALYZE statistics target (PostgreSQL's default is 100). ANALYZE samples 300 rows per unit of target and
 * computes every column's statistics from the sample, so on PGlite, where it holds the one connection, a smaller
 * sample is a shorter stall: `ANALYZE runs` with 55k runs left of 100k took 467-687 ms at 100, 109-174 ms at 30 and
 * 37-47 ms at 10 on a quiet machine (only the columns queries filter on, at 100: 218-398 ms). The runs list's and
 * the search's plans were the same at 10 as at 100 every time (EXPLAIN in bench/retention/statements.ts); at 30 a
 * search switched now and then to a worse plan (bench/RESULTS.md, Run retention). What is coarser: histograms of
 * 10 buckets, so the search's selectivity is estimated partly by pg_trgm's and LIKE's fixed rules rather than from
 * the sample. PostgreSQL keeps its default (autovacuum's ANALYZE
 * runs beside the API there).
 */
export const PGLITE_STATISTICS_TARGET = 10;
/** How long the API must have been idle before a VACUUM may clean a table's indexes (the multi-second part). */
export const INDEX_CLEANUP_IDLE_MS = 60_000;
/** The longest a table's index pass waits for such a moment: under constant traffic it goes ahead after that. */
export const INDEX_CLEANUP_MAX_WAIT_MS = 24 * 3600_000;

/**
 * PGlite's vacuum (it has no autovacuum): autovacuum's rules applied by the server, shaped for one connection that
 * a statement holds whole (see vacuumTables). The VACUUM that a retention pass or the periodic check calls for is
 * the heap-only one, a fraction of a second: the deleted rows' space is reused at once. The index pass it leaves,
 * the statement of seconds on a large runs table, waits until the API has been idle for INDEX_CLEANUP_IDLE_MS (a
 * request arriving while it runs is then unlikely), at most INDEX_CLEANUP_MAX_WAIT_MS. Leaving it costs little
 * meanwhile: each dead row keeps a 4-byte line pointer and its index entries, which scans step over.
 */
export class PgliteUpkeep<T> {
  /** The tables whose index pass is waiting, and since when (this process's memory: after a restart, the dead
   * rows that ANALYZE finds call for a VACUUM again). */
  private readonly waiting = new Map<string, { schema: string; table: string; since: number }>();
  private turn: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly db: Kysely<T>,
    private readonly options: {
      /** For how long the API has had no request (RequestActivity.idleMs). */
      idleMs: () => number;
      /** A quiet moment of the API, before each statement after the first (RequestActivity.quiet). */
      whenQuiet?: () => Promise<void>;
      idleForIndexCleanupMs?: number;
      maxWaitMs?: number;
      now?: () => number;
      onStatement?: (statement: VacuumStatement) => void;
    },
  ) {}

  /**
   * VACUUM and ANALYZE where autovacuum's rules call for them (after a retention pass, and periodically): the full
   * VACUUM if the API is idle, else the heap-only one; then the index passes that are due.
   */
  vacuum(): Promise<VacuumStatement[]> {
    return this.inTurn(async () => {
      const idle = this.idle;
      const done = await vacuumTables(this.db, {
        whenQuiet: this.options.whenQuiet,
        onStatement: this.options.onStatement,
        indexCleanup: idle,
        statisticsTarget: PGLITE_STATISTICS_TARGET,
      });
      for (const statement of done) {
        const key = `${statement.schema}.${statement.table}`;
        if (statement.statement === 'VACUUM') this.waiting.delete(key);
        if (statement.statement === 'VACUUM (INDEX_CLEANUP OFF)' && !this.waiting.has(key))
          this.waiting.set(key, { schema: statement.schema, table: statement.table, since: this.now() });
      }
      return [...done, ...(await this.dueIndexPasses())];
    });
  }

  /** The index passes that are due (the API idle, or waited long enough); no query when none is waiting. */
  cleanIndexesIfDue(): Promise<VacuumStatement[]> {
    if (this.waiting.size === 0) return Promise.resolve([]);
    return this.inTurn(() => this.dueIndexPasses());
  }

  /** The tables whose index pass is waiting. */
  get waitingTables(): string[] {
    return [...this.waiting.keys()];
  }

  private async dueIndexPasses(): Promise<VacuumStatement[]> {
    const idle = this.idle;
    const maxWait = this.options.maxWaitMs ?? INDEX_CLEANUP_MAX_WAIT_MS;
    const due = [...this.waiting.values()].filter((table) => idle || this.now() - table.since >= maxWait);
    if (due.length === 0) return [];
    await this.options.whenQuiet?.();
    const done = await cleanIndexes(this.db, due, {
      whenQuiet: this.options.whenQuiet,
      onStatement: this.options.onStatement,
    });
    for (const table of due) this.waiting.delete(`${table.schema}.${table.table}`);
    return done;
  }

  private get idle(): boolean {
    return this.options.idleMs() >= (this.options.idleForIndexCleanupMs ?? INDEX_CLEANUP_IDLE_MS);
  }

  private now(): number {
    return this.options.now?.() ?? performance.now();
  }

  /** One chore at a time (the retention pass's vacuum and the periodic one never interleave their statements). */
  private inTurn<R>(chore: () => Promise<R>): Promise<R> {
    const result = this.turn.then(chore);
    this.turn = result.catch(() => undefined);
    return result;
  }
}
