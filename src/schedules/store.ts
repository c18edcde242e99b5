import type { Selectable } from 'kysely';
import { type Expression, type ExpressionBuilder, type Kysely, type SqlBool, sql } from 'kysely';
import type { DB } from '../database.js';
import type { SchedulesTable } from './tables.js';

export type ScheduleRow = Selectable<SchedulesTable> & {
  created_by_name: string | null;
  created_by_email: string | null;
  updated_by_name: string | null;
  updated_by_email: string | null;
};

/** The team's schedules, plus the caller's own personal ones (the same rule as runs). */
export interface Visibility {
  teamUid: string;
  principalUid: string;
}

function visible(eb: ExpressionBuilder<DB, 'schedules'>, who: Visibility): Expression<SqlBool> {
  return eb.and([
    eb('schedules.team_uid', '=', who.teamUid),
    // An automation's cron triggers are its own, changed through the automation.
    eb('schedules.automation_id', 'is', null),
    eb.or([eb('schedules.scope_type', '=', 'Team'), eb('schedules.created_by_uid', '=', who.principalUid)]),
  ]);
}

function selectSchedules(db: Kysely<DB>) {
  return db
    .selectFrom('schedules')
    .leftJoin('users as creator', 'creator.uid', 'schedules.created_by_uid')
    .leftJoin('users as updater', 'updater.uid', 'schedules.updated_by_uid')
    .selectAll('schedules')
    .select([
      'creator.display_name as created_by_name',
      'creator.email as created_by_email',
      'updater.display_name as updated_by_name',
      'updater.email as updated_by_email',
    ]);
}

export interface ScheduleValues {
  name: string;
  cron_schedule: string;
  prompt: string;
  enabled: boolean;
  agent_config: Record<string, unknown> | null;
  agent_uid: string | null;
  metadata: Record<string, string>;
  mode: 'normal' | 'plan' | 'orchestrate' | null;
  next_run_at: Date | null;
}

function columns(values: ScheduleValues) {
  return {
    ...values,
    agent_config: values.agent_config ? JSON.stringify(values.agent_config) : null,
    metadata: JSON.stringify(values.metadata),
  };
}

export async function insertSchedule(
  db: Kysely<DB>,
  row: ScheduleValues & {
    id: string;
    team_uid: string;
    scope_type: 'User' | 'Team';
    scope_uid: string;
    created_by_uid: string;
  },
): Promise<void> {
  await db
    .insertInto('schedules')
    .values({
      ...columns(row),
      id: row.id,
      team_uid: row.team_uid,
      scope_type: row.scope_type,
      scope_uid: row.scope_uid,
      created_by_uid: row.created_by_uid,
      updated_by_uid: row.created_by_uid,
    })
    .execute();
}

export async function findSchedule(db: Kysely<DB>, who: Visibility, id: string): Promise<ScheduleRow | undefined> {
  return selectSchedules(db)
    .where((eb) => visible(eb, who))
    .where('schedules.id', '=', id)
    .executeTakeFirst();
}

export async function listSchedules(db: Kysely<DB>, who: Visibility): Promise<ScheduleRow[]> {
  return selectSchedules(db)
    .where((eb) => visible(eb, who))
    .orderBy('schedules.name')
    .orderBy('schedules.id')
    .execute();
}

export async function updateSchedule(
  db: Kysely<DB>,
  who: Visibility,
  id: string,
  values: ScheduleValues,
  updatedBy: string,
): Promise<boolean> {
  const result = await db
    .updateTable('schedules')
    .set({ ...columns(values), updated_by_uid: updatedBy, updated_at: sql`clock_timestamp()` })
    .where((eb) => visible(eb, who))
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Pause (next run cleared) or resume (next run from now). */
export async function setEnabled(
  db: Kysely<DB>,
  who: Visibility,
  id: string,
  enabled: boolean,
  nextRunAt: Date | null,
  updatedBy: string,
): Promise<boolean> {
  const result = await db
    .updateTable('schedules')
    .set({ enabled, next_run_at: nextRunAt, updated_by_uid: updatedBy, updated_at: sql`clock_timestamp()` })
    .where((eb) => visible(eb, who))
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function deleteSchedule(db: Kysely<DB>, who: Visibility, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom('schedules')
    .where((eb) => visible(eb, who))
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export type DueSchedule = Pick<
  Selectable<SchedulesTable>,
  | 'id'
  | 'team_uid'
  | 'name'
  | 'cron_schedule'
  | 'prompt'
  | 'agent_config'
  | 'agent_uid'
  | 'metadata'
  | 'mode'
  | 'scope_type'
  | 'created_by_uid'
  | 'next_run_at'
>;

/**
 * Locks up to `limit` schedules whose tick has come. SKIP LOCKED: replicas claim disjoint sets, and a row stays
 * locked until the transaction that starts its run and moves its next tick commits, so a tick fires once.
 */
export async function claimDue(db: Kysely<DB>, now: Date, limit: number): Promise<DueSchedule[]> {
  return db
    .selectFrom('schedules')
    .select([
      'id',
      'team_uid',
      'name',
      'cron_schedule',
      'prompt',
      'agent_config',
      'agent_uid',
      'metadata',
      'mode',
      'scope_type',
      'created_by_uid',
      'next_run_at',
    ])
    .where('enabled', '=', true)
    .where('next_run_at', '<=', now)
    .orderBy('next_run_at')
    .limit(limit)
    .forUpdate()
    .skipLocked()
    .execute();
}

export interface TickOutcome {
  id: string;
  next_run_at: Date | null;
  /** null: the run started. */
  error: string | null;
}

/** Moves each claimed schedule to its next tick and records how its spawn went, in one statement. */
export async function recordTicks(db: Kysely<DB>, outcomes: TickOutcome[], now: Date): Promise<void> {
  if (outcomes.length === 0) return;
  // One JSON parameter: one statement text for any batch size, prepared once per connection.
  await sql`
    UPDATE schedules s SET
      next_run_at = t.next_run_at,
      last_ran_at = CASE WHEN t.error IS NULL THEN ${now.toISOString()}::timestamptz ELSE s.last_ran_at END,
      last_spawn_error = t.error
    FROM jsonb_to_recordset(${JSON.stringify(outcomes)}::jsonb) AS t(id text, next_run_at timestamptz, error text)
    WHERE s.id = t.id`.execute(db);
}

/** When the earliest enabled schedule is due, so the loop can sleep until then. */
export async function earliestDue(db: Kysely<DB>): Promise<Date | null> {
  const row = await db
    .selectFrom('schedules')
    .select((eb) => eb.fn.min('next_run_at').as('next'))
    .where('enabled', '=', true)
    .executeTakeFirst();
  return row?.next ? new Date(row.next as unknown as string) : null;
}

export async function automationScheduleRows(db: Kysely<DB>, automationId: string) {
  return db
    .selectFrom('schedules')
    .select(['id', 'cron_schedule', 'enabled', 'next_run_at'])
    .where('automation_id', '=', automationId)
    .execute();
}

export async function insertAutomationSchedule(
  db: Kysely<DB>,
  automationId: string,
  row: ScheduleValues & { id: string; team_uid: string; created_by_uid: string },
): Promise<void> {
  await db
    .insertInto('schedules')
    .values({
      ...columns(row),
      id: row.id,
      team_uid: row.team_uid,
      scope_type: 'Team',
      scope_uid: row.team_uid,
      created_by_uid: row.created_by_uid,
      updated_by_uid: row.created_by_uid,
      automation_id: automationId,
    })
    .execute();
}

export async function updateAutomationSchedule(db: Kysely<DB>, id: string, values: ScheduleValues): Promise<void> {
  await db
    .updateTable('schedules')
    .set({ ...columns(values), updated_at: sql`clock_timestamp()` })
    .where('id', '=', id)
    .execute();
}

export async function deleteSchedulesById(db: Kysely<DB>, ids: string[]): Promise<void> {
  if (ids.length > 0) await db.deleteFrom('schedules').where('id', 'in', ids).execute();
}

export async function automationSchedules(db: Kysely<DB>, automationIds: string[]) {
  if (automationIds.length === 0) return [];
  return db
    .selectFrom('schedules')
    .select(['automation_id', 'cron_schedule', 'next_run_at', 'last_ran_at', 'last_spawn_error'])
    .where('automation_id', 'in', automationIds)
    .execute();
}
