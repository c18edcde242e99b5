import type { ColumnType } from 'kysely';
import type { Timestamp } from '../platform/db/columns.js';

export interface TeamBudgetsTable {
  team_uid: string;
  /** numeric: read as a string, written as a number. */
  monthly_budget_usd: ColumnType<string, number, number>;
  warn_at_percent: ColumnType<number, number | undefined, number>;
  updated_at: Timestamp;
}

export interface BudgetsTables {
  team_budgets: TeamBudgetsTable;
}
