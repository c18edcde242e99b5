import { type Kysely, sql } from 'kysely';

/** What a table needs, by PostgreSQL autovacuum's default rules applied to its statistics. */
export interface TableUpkeep {
  schema: string;
  table: string;
  vacuum: boolean;
  analyze: boolean;
}

/**
 * The tables to vacuum or analyze now, by autovacuum's default thresholds (PGlite has no autovacuum, so Hangar
 * applies its rules itself): VACUUM when the dead rows pass 50 + 20 % of the live ones, or the rows inserted since
 * the last VACUUM pass 1000 + 20 % (that sets the visibility map); ANALYZE when the rows changed since the last
 * ANALYZE pass 50 + 10 %. A table nobody wrote to is left alone: a whole-database VACUUM (ANALYZE) re-read every
 * table and the catalogs, which cost PGlite 1.4 s of its one connection with nothing to reclaim (measured).
 */
export async function tablesNeedingUpkeep<T>(db: Kysely<T>): Promise<TableUpkeep[]> {
  const result = await sql<TableUpkeep>`
    SELECT schemaname AS schema, relname AS "table",
      n_dead_tup > 50 + 0.2 * n_live_tup OR n_ins_since_vacuum > 1000 + 0.2 * n_live_tup AS vacuum,
      n_mod_since_analyze > 50 + 0.1 * n_live_tup AS analyze
    FROM pg_stat_user_tables
    WHERE n_dead_tup > 50 + 0.2 * n_live_tup OR n_ins_since_vacuum > 1000 + 0.2 * n_live_tup
      OR n_mod_since_analyze > 50 + 0.1 * n_live_tup
    ORDER BY n_dead_tup DESC, relname`.execute(db);
  return result.rows;
}

/**
 * `VACUUM (INDEX_CLEANUP OFF)`: the heap alone. It removes the dead rows, records the freed space in the free space
 * map (new rows reuse it) and leaves each a 4-byte dead line pointer, with its index entries, until a plain VACUUM
 * reads every index of the table whole to remove them. PostgreSQL's own VACUUM skips that index pass when few pages
 * have dead items; on PGlite it is what holds the connection: after 50k of 100k runs were deleted, the index pass
 * is most of `VACUUM runs` (19 indexes, the trigram search index above all; bench/RESULTS.md, Run retention).
 */
export type VacuumKind = 'VACUUM' | 'VACUUM (INDEX_CLEANUP OFF)' | 'ANALYZE';

/** One maintenance statement and how long it held the database (PGlite: the API's one connection, and the process). */
export interface VacuumStatement {
  schema: string;
  table: string;
  statement: VacuumKind;
  ms: number;
}

interface StatementOptions {
  pauseMs?: number;
  /** Awaited before each statement after the first: a quiet moment of the API (see RequestActivity). */
  whenQuiet?: () => Promise<void>;
  onStatement?: (statement: VacuumStatement) => void;
  /**
   * The statistics target of the ANALYZE statements (PostgreSQL's default_statistics_target, 100, when absent):
   * ANALYZE reads 300 times as many rows. See PGLITE_STATISTICS_TARGET.
   */
  statisticsTarget?: number;
}

/**
 * The statements in turn, each its own, with a pause between them: PGlite runs one statement at a time in this
 * process, so the API's queries get their turn between them instead of waiting behind one covering the database.
 */
async function runStatements<T>(
  db: Kysely<T>,
  statements: Array<{ schema: string; table: string; statement: VacuumKind }>,
  options: StatementOptions,
): Promise<VacuumStatement[]> {
  const done: VacuumStatement[] = [];
  for (const { schema, table, statement } of statements) {
    if (done.length > 0) {
      await new Promise((resolve) => setTimeout(resolve, options.pauseMs ?? 25));
      await options.whenQuiet?.();
    }
    const started = performance.now();
    const name = sql.id(schema, table);
    if (statement === 'VACUUM') await sql`VACUUM ${name}`.execute(db);
    else if (statement === 'VACUUM (INDEX_CLEANUP OFF)') await sql`VACUUM (INDEX_CLEANUP OFF) ${name}`.execute(db);
    else if (options.statisticsTarget === undefined) await sql`ANALYZE ${name}`.execute(db);
    else {
      const target = options.statisticsTarget;
      // For this statement only (SET LOCAL ends with its transaction; ANALYZE, unlike VACUUM, may run in one).
      await db.transaction().execute(async (trx) => {
        await sql`SELECT set_config('default_statistics_target', ${String(target)}, true)`.execute(trx);
        await sql`ANALYZE ${name}`.execute(trx);
      });
    }
    const record = { schema, table, statement, ms: performance.now() - started };
    done.push(record);
    options.onStatement?.(record);
  }
  return done;
}

/**
 * VACUUM and ANALYZE of the tables that need them (tablesNeedingUpkeep), a table and a statement at a time (two
 * statements rather than VACUUM (ANALYZE): each holds the connection about half as long). With `indexCleanup:
 * false`, the VACUUM is the heap-only one (see VacuumKind): the space is reusable at once, and the index pass is
 * left for later (cleanIndexes). Never VACUUM FULL: it rewrites and locks the table. Returns each statement with
 * its duration.
 */
export async function vacuumTables<T>(
  db: Kysely<T>,
  options: StatementOptions & { indexCleanup?: boolean } = {},
): Promise<VacuumStatement[]> {
  const vacuum: VacuumKind = options.indexCleanup === false ? 'VACUUM (INDEX_CLEANUP OFF)' : 'VACUUM';
  const statements = (await tablesNeedingUpkeep(db)).flatMap((upkeep) => [
    ...(upkeep.vacuum ? [{ ...upkeep, statement: vacuum }] : []),
    ...(upkeep.analyze ? [{ ...upkeep, statement: 'ANALYZE' as const }] : []),
  ]);
  return runStatements(db, statements, options);
}

/** A plain VACUUM of each table: the index pass a heap-only VACUUM left (a table gone since is skipped). */
export async function cleanIndexes<T>(
  db: Kysely<T>,
  tables: Array<{ schema: string; table: string }>,
  options: StatementOptions = {},
): Promise<VacuumStatement[]> {
  const present = await sql<{ schema: string; table: string }>`
    SELECT schemaname AS schema, relname AS "table" FROM pg_stat_user_tables`.execute(db);
  const exists = new Set(present.rows.map((row) => `${row.schema}.${row.table}`));
  const statements = tables
    .filter((table) => exists.has(`${table.schema}.${table.table}`))
    .map((table) => ({ ...table, statement: 'VACUUM' as const }));
  return runStatements(db, statements, options);
}
