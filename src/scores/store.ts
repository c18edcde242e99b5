import { type Kysely, sql } from 'kysely';
import type { DB } from '../database.js';

/** Queries of the scores slice: scorers, the judge runs' own rows, and verdicts. */

export interface ScorerRow {
  id: number;
  team_uid: string;
  name: string;
  rubric: string;
  labels: Array<{ label: string; score: number }>;
  passing_score: number;
  created_at: Date;
}

export async function insertScorer(db: Kysely<DB>, scorer: Omit<ScorerRow, 'id' | 'created_at'>): Promise<ScorerRow> {
  return (await db
    .insertInto('scorers')
    .values({ ...scorer, labels: JSON.stringify(scorer.labels) })
    .returningAll()
    .executeTakeFirstOrThrow()) as ScorerRow;
}

export async function listScorers(db: Kysely<DB>, teamUid: string): Promise<ScorerRow[]> {
  return (await db
    .selectFrom('scorers')
    .selectAll()
    .where('team_uid', '=', teamUid)
    .orderBy('name')
    .orderBy('id')
    .execute()) as ScorerRow[];
}

export async function findScorers(db: Kysely<DB>, teamUid: string, ids: number[]): Promise<ScorerRow[]> {
  if (ids.length === 0) return [];
  return (await db
    .selectFrom('scorers')
    .selectAll()
    .where('team_uid', '=', teamUid)
    .where('id', '=', sql<number>`ANY(${ids}::int[])`)
    .execute()) as ScorerRow[];
}

export async function deleteScorer(db: Kysely<DB>, teamUid: string, id: number): Promise<boolean> {
  const result = await db.deleteFrom('scorers').where('team_uid', '=', teamUid).where('id', '=', id).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** A run as the scores endpoint needs to see it: is it a judge run, of which run, and is it executing. */
export async function judgeRun(db: Kysely<DB>, runId: string) {
  return db
    .selectFrom('runs')
    .select(['id', 'team_uid', 'source', 'metadata', 'execution_id', 'sandbox_running'])
    .where('id', '=', runId)
    .executeTakeFirst();
}

export interface AcceptedVerdict {
  scorer_id: number;
  classification: string;
  score: number;
  passed: boolean;
  reason: string;
  failed: boolean;
}

/** Records verdicts; a judge that answers again for a scorer replaces its earlier verdict. */
export async function upsertVerdicts(
  db: Kysely<DB>,
  scoredRunId: string,
  judgeRunId: string,
  verdicts: AcceptedVerdict[],
): Promise<void> {
  if (verdicts.length === 0) return;
  await db
    .insertInto('run_scores')
    .values(verdicts.map((verdict) => ({ ...verdict, scored_run_id: scoredRunId, judge_run_id: judgeRunId })))
    .onConflict((conflict) =>
      conflict.columns(['scored_run_id', 'scorer_id', 'judge_run_id']).doUpdateSet((eb) => ({
        classification: eb.ref('excluded.classification'),
        score: eb.ref('excluded.score'),
        passed: eb.ref('excluded.passed'),
        reason: eb.ref('excluded.reason'),
        failed: eb.ref('excluded.failed'),
        created_at: sql`clock_timestamp()`,
      })),
    )
    .execute();
}
