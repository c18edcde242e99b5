import { type Kysely, sql } from 'kysely';
import type { DB } from '../database.js';
import type { RunnerShape } from './schemas.js';

export interface RunnerRow {
  uid: string;
  team_uid: string;
  name: string;
  description: string;
  shape: RunnerShape;
  factory_uid: string | null;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = ['uid', 'team_uid', 'name', 'description', 'shape', 'factory_uid', 'created_at', 'updated_at'] as const;
const asRow = (row: Omit<RunnerRow, 'shape'> & { shape: unknown }) => row as RunnerRow;

/** Every query names the team: a runner of another team is a runner that does not exist. */
export async function listRunners(db: Kysely<DB>, teamUid: string): Promise<RunnerRow[]> {
  const rows = await db
    .selectFrom('runners')
    .select(COLUMNS)
    .where('team_uid', '=', teamUid)
    .orderBy(sql`name COLLATE "C"`)
    .execute();
  return rows.map(asRow);
}

export async function findRunner(db: Kysely<DB>, teamUid: string, uid: string): Promise<RunnerRow | undefined> {
  const row = await db
    .selectFrom('runners')
    .select(COLUMNS)
    .where('team_uid', '=', teamUid)
    .where('uid', '=', uid)
    .executeTakeFirst();
  return row && asRow(row);
}

/** Fails on runners_team_uid_name_key when the team already has a runner of that name (so does updateRunner). */
export async function insertRunner(
  db: Kysely<DB>,
  row: { uid: string; team_uid: string; name: string; description: string; shape: RunnerShape; factory_uid?: string },
): Promise<void> {
  await db
    .insertInto('runners')
    .values({ ...row, factory_uid: row.factory_uid ?? null, shape: JSON.stringify(row.shape) })
    .execute();
}

export async function updateRunner(
  db: Kysely<DB>,
  teamUid: string,
  uid: string,
  values: { name: string; description: string; shape: RunnerShape },
): Promise<boolean> {
  const result = await db
    .updateTable('runners')
    .set({ ...values, shape: JSON.stringify(values.shape), updated_at: sql`clock_timestamp()` })
    .where('team_uid', '=', teamUid)
    .where('uid', '=', uid)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function deleteRunner(db: Kysely<DB>, teamUid: string, uid: string): Promise<boolean> {
  const result = await db
    .deleteFrom('runners')
    .where('team_uid', '=', teamUid)
    .where('uid', '=', uid)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
