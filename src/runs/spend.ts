import { type Kysely, sql } from 'kysely';
import type { DB } from '../database.js';

/**
 * What a team's runs created since `since` cost, in USD: the sum of their `request_usage.inference_cost` (written
 * as an execution's usage arrives, and finally when it ends). Reads the runs_team_created index.
 */
export async function teamSpendSince(db: Kysely<DB>, teamUid: string, since: Date): Promise<number> {
  const row = await db
    .selectFrom('runs')
    .select(sql<string | null>`sum((request_usage->>'inference_cost')::numeric)`.as('spent'))
    .where('team_uid', '=', teamUid)
    .where('created_at', '>=', since)
    .executeTakeFirst();
  return Number(row?.spent ?? 0);
}

/** The start of the calendar month (UTC) `at` is in: budgets are monthly. */
export function monthStart(at: Date): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
}
