import type { Generated } from 'kysely';
import type { Json, NullableJson, NullableTimestamp, Timestamp } from '../platform/db/columns.js';

export interface SchedulesTable {
  id: string;
  team_uid: string;
  name: string;
  cron_schedule: string;
  prompt: string;
  enabled: boolean;
  agent_config: NullableJson<Record<string, unknown>>;
  agent_uid: string | null;
  metadata: Json<Record<string, string>>;
  scope_type: 'User' | 'Team';
  scope_uid: string;
  created_by_uid: string;
  updated_by_uid: string;
  created_at: Timestamp;
  updated_at: Timestamp;
  next_run_at: NullableTimestamp;
  last_ran_at: NullableTimestamp;
  last_spawn_error: string | null;
  /** The mode of every run it starts (migration 0046); null: normal. */
  mode: Generated<'normal' | 'plan' | 'orchestrate' | null>;
  /** Set on the schedules of an automation's cron triggers; the schedules API shows only the others. */
  automation_id: Generated<string | null>;
}

/** The schedules slice's tables, as Kysely sees them (src/database.ts composes every slice's into DB). */
export interface SchedulesTables {
  schedules: SchedulesTable;
}
