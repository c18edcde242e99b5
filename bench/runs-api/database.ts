import { CompiledQuery, type Kysely } from 'kysely';
import pg from 'pg';
import type { DB } from '../../src/database.js';

/** Plain SQL with $n parameters: the benchmark's seeding and the baselines need nothing more. */
export type Query = <Row = Record<string, unknown>>(text: string, params?: unknown[]) => Promise<Row[]>;

export function poolQuery(pool: pg.Pool): Query {
  return async <Row>(text: string, params: unknown[] = []) => (await pool.query(text, params)).rows as Row[];
}

/** On PGlite the only way in is Hangar's own Kysely (one in-process database), so raw SQL goes through it. */
export function kyselyQuery(db: Kysely<any>): Query {
  return async <Row>(text: string, params: unknown[] = []) =>
    (await db.executeQuery(CompiledQuery.raw(text, params))).rows as Row[];
}

export interface ScratchDatabase {
  url: string;
  drop(): Promise<void>;
}

/** A throw-away database inside the server at `adminUrl`, so the benchmark never touches real data. */
export async function createScratchDatabase(adminUrl: string): Promise<ScratchDatabase> {
  const name = `hangar_bench_${process.pid}`;
  const admin = async (statement: string) => {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  };
  await admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await admin(`CREATE DATABASE "${name}"`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`) };
}

/** The bootstrap team `default` and its first member, who own the runs a benchmark seeds. */
export function defaultOwner(db: Kysely<DB>): Promise<{ teamUid: string; userUid: string }> {
  return db
    .selectFrom('teams')
    .innerJoin('team_members', 'team_members.team_uid', 'teams.uid')
    .select(['teams.uid as teamUid', 'team_members.user_uid as userUid'])
    .where('teams.name', '=', 'default')
    .executeTakeFirstOrThrow();
}
