import { type Kysely, sql } from 'kysely';

/** One maintenance statement and how long it held the database (PGlite: the API's one connection, and the process). */
export interface VacuumStatement {
  table: string;
  statement: 'VACUUM' | 'ANALYZE';
  ms: number;
}

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
 * VACUUM and ANALYZE of the tables that need them (tablesNeedingUpkeep), each its own statement, with a pause
 * between statements: PGlite runs one statement at a time in this process, so the API's queries get their turn
 * between them instead of waiting behind one statement covering the whole database. A table's VACUUM still holds
 * the connection while it runs: its cost grows with the table's indexes, which it reads whole when it removes
 * dead rows (the runs table's, after 100k runs were deleted: about 2.5 s here, mostly the trigram index). Never
 * VACUUM FULL: it rewrites and locks the table. Returns each statement with its duration.
 */
export async function vacuumTables<T>(
  db: Kysely<T>,
  options: {
    pauseMs?: number;
    /** Awaited before each statement after the first: a quiet moment of the API (see RequestActivity). */
    whenQuiet?: () => Promise<void>;
    onStatement?: (statement: VacuumStatement) => void;
  } = {},
): Promise<VacuumStatement[]> {
  const done: VacuumStatement[] = [];
  const run = async (upkeep: TableUpkeep, statement: VacuumStatement['statement']) => {
    if (done.length > 0) {
      await new Promise((resolve) => setTimeout(resolve, options.pauseMs ?? 25));
      await options.whenQuiet?.();
    }
    const started = performance.now();
    const table = sql.id(upkeep.schema, upkeep.table);
    await (statement === 'VACUUM' ? sql`VACUUM ${table}` : sql`ANALYZE ${table}`).execute(db);
    const record = { table: upkeep.table, statement, ms: performance.now() - started };
    done.push(record);
    options.onStatement?.(record);
  };
  for (const upkeep of await tablesNeedingUpkeep(db)) {
    // Two statements rather than VACUUM (ANALYZE): each holds the connection about half as long.
    if (upkeep.vacuum) await run(upkeep, 'VACUUM');
    if (upkeep.analyze) await run(upkeep, 'ANALYZE');
  }
  return done;
}
