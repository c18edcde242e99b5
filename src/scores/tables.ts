import type { Generated } from 'kysely';
import type { Json, Timestamp } from '../platform/db/columns.js';

export interface ScorersTable {
  id: Generated<number>;
  team_uid: string;
  name: string;
  rubric: string;
  labels: Json<Array<{ label: string; score: number }>>;
  passing_score: number;
  created_at: Timestamp;
}

export interface RunScoresTable {
  scored_run_id: string;
  scorer_id: number;
  judge_run_id: string;
  classification: string;
  score: number;
  passed: boolean;
  reason: string;
  failed: boolean;
  created_at: Timestamp;
}

/** The scores slice's tables, as Kysely sees them (src/database.ts composes every slice's into DB). */
export interface ScoresTables {
  scorers: ScorersTable;
  run_scores: RunScoresTable;
}
