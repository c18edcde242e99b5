import { type Kysely, type Selectable, sql } from 'kysely';
import type { DB } from '../database.js';
import type { Trigger } from './schemas.js';
import type { AutomationsTable } from './tables.js';

export type AutomationRow = Omit<Selectable<AutomationsTable>, 'triggers'> & { triggers: Trigger[] };

export interface AutomationValues {
  name: string;
  prompt: string;
  enabled: boolean;
  agent_uid: string | null;
  agent_config: Record<string, unknown> | null;
  triggers: Trigger[];
}

/** Every webhook UID the triggers select, for the evaluator's index. */
export function selectedWebhooks(triggers: Trigger[]): string[] {
  return [
    ...new Set(triggers.flatMap((trigger) => (trigger.provider === 'webhook' ? trigger.filter.webhook_ids : []))),
  ];
}

function columns(values: AutomationValues) {
  return {
    ...values,
    agent_config: values.agent_config ? JSON.stringify(values.agent_config) : null,
    triggers: JSON.stringify(values.triggers),
    webhook_uids: selectedWebhooks(values.triggers),
  };
}

export async function insertAutomation(
  db: Kysely<DB>,
  row: AutomationValues & { id: string; team_uid: string; factory_uid: string; created_by_uid: string },
): Promise<void> {
  await db
    .insertInto('automations')
    .values({
      ...columns(row),
      id: row.id,
      team_uid: row.team_uid,
      factory_uid: row.factory_uid,
      created_by_uid: row.created_by_uid,
      updated_by_uid: row.created_by_uid,
    })
    .execute();
}

export async function updateAutomation(
  db: Kysely<DB>,
  teamUid: string,
  id: string,
  values: AutomationValues,
  updatedBy: string,
): Promise<boolean> {
  const result = await db
    .updateTable('automations')
    .set({ ...columns(values), updated_by_uid: updatedBy, updated_at: sql`clock_timestamp()` })
    .where('team_uid', '=', teamUid)
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function deleteAutomation(db: Kysely<DB>, teamUid: string, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom('automations')
    .where('team_uid', '=', teamUid)
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export async function findAutomation(db: Kysely<DB>, teamUid: string, id: string): Promise<AutomationRow | undefined> {
  return (await db
    .selectFrom('automations')
    .selectAll()
    .where('team_uid', '=', teamUid)
    .where('id', '=', id)
    .executeTakeFirst()) as AutomationRow | undefined;
}

export async function listAutomations(db: Kysely<DB>, teamUid: string, factoryUid?: string): Promise<AutomationRow[]> {
  let query = db.selectFrom('automations').selectAll().where('team_uid', '=', teamUid);
  if (factoryUid !== undefined) query = query.where('factory_uid', '=', factoryUid);
  return (await query.orderBy(sql`name COLLATE "C"`).orderBy('id').execute()) as AutomationRow[];
}

/** The team's enabled automations that select the webhook. */
export async function automationsFor(db: Kysely<DB>, teamUid: string, webhookUid: string): Promise<AutomationRow[]> {
  return (await db
    .selectFrom('automations')
    .selectAll()
    .where('team_uid', '=', teamUid)
    .where('enabled', '=', true)
    .where(sql<boolean>`webhook_uids @> ARRAY[${webhookUid}]::text[]`)
    .orderBy('id')
    .execute()) as AutomationRow[];
}

export interface Firing {
  delivery_seq: string | null;
  automation_id: string;
  run_id: string | null;
  error: string | null;
  github_delivery_id?: string;
  github_event?: string;
}

export async function insertFirings(db: Kysely<DB>, firings: Firing[]): Promise<void> {
  if (firings.length === 0) return;
  await db.insertInto('automation_firings').values(firings).execute();
}

export interface FiringRow {
  delivery_seq: string | null;
  github_delivery_id: string | null;
  github_event: string | null;
  run_id: string | null;
  error: string | null;
  fired_at: Date;
}

/** The automation's latest firings, newest first. */
export async function firingsOf(db: Kysely<DB>, automationId: string, limit: number): Promise<FiringRow[]> {
  const rows = await db
    .selectFrom('automation_firings')
    .select(['delivery_seq', 'github_delivery_id', 'github_event', 'run_id', 'error', 'fired_at'])
    .where('automation_id', '=', automationId)
    .orderBy('fired_at', 'desc')
    .limit(limit)
    .execute();
  return rows.map((row) => ({ ...row, delivery_seq: row.delivery_seq === null ? null : String(row.delivery_seq) }));
}

/** The team's automations that started the most runs since `since` (webhook firings), for the overview. */
export async function busiestAutomations(
  db: Kysely<DB>,
  teamUid: string,
  since: Date,
  limit: number,
): Promise<{ automation_id: string; name: string; runs: number }[]> {
  return db
    .selectFrom('automations as a')
    .innerJoin('automation_firings as f', 'f.automation_id', 'a.id')
    .where('a.team_uid', '=', teamUid)
    .where('f.fired_at', '>=', since)
    .where('f.run_id', 'is not', null)
    .groupBy(['a.id', 'a.name'])
    .select((eb) => ['a.id as automation_id', 'a.name', eb.fn.countAll<number>().as('runs')])
    .orderBy('runs', 'desc')
    .orderBy('a.name')
    .limit(limit)
    .execute()
    .then((rows) => rows.map((row) => ({ ...row, runs: Number(row.runs) })));
}
