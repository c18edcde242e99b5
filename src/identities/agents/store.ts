import { type Kysely, type Selectable, sql } from 'kysely';
import type { DB } from '../../database.js';
import type { AgentIdentitiesTable, AgentType } from '../tables.js';

export type AgentRow = Selectable<AgentIdentitiesTable> & { available: boolean };

/** Agents of a team with their availability: the oldest `limit` agents of the team are available. */
function selectAgents(db: Kysely<DB>, teamUid: string, limit: number) {
  return db
    .with('ranked', (qb) =>
      qb
        .selectFrom('agent_identities')
        .selectAll()
        .select(sql<string>`row_number() OVER (ORDER BY created_at, uid)`.as('position'))
        .where('team_uid', '=', teamUid),
    )
    .selectFrom('ranked')
    .selectAll('ranked')
    .select(sql<boolean>`ranked.position <= ${limit}`.as('available'));
}

export async function listAgents(
  db: Kysely<DB>,
  teamUid: string,
  limit: number,
  factoryUids?: string[],
): Promise<AgentRow[]> {
  let query = selectAgents(db, teamUid, limit);
  if (factoryUids) query = query.where('ranked.factory_uid', 'in', factoryUids.length ? factoryUids : ['']);
  return (await query.orderBy('ranked.created_at').orderBy('ranked.uid').execute()) as AgentRow[];
}

export async function findAgent(
  db: Kysely<DB>,
  teamUid: string,
  uid: string,
  limit: number,
): Promise<AgentRow | undefined> {
  return (await selectAgents(db, teamUid, limit).where('ranked.uid', '=', uid).executeTakeFirst()) as
    | AgentRow
    | undefined;
}

export interface AgentValues {
  name: string;
  description: string | null;
  prompt: string | null;
  environment_id: string | null;
  base_model: string | null;
  worker_host: string | null;
  skills: string[];
  secrets: Array<{ name: string }>;
  mcp_servers: Record<string, unknown> | null;
  harness: Record<string, unknown> | null;
  /** Left as it is when undefined (factory definitions do not set it). */
  on_behalf_of_enabled?: boolean;
  /** Left as it is when undefined; a factory definition sets it (the agent file's runner, or none). */
  default_runner_uid?: string | null;
  /** Left as it is when undefined (factory definitions do not set them). */
  agent_type?: AgentType;
  harness_auth_secrets?: Record<string, string> | null;
  credential_strategy?: 'CREATOR' | 'EXECUTOR' | null;
}

function columns({ harness_auth_secrets, ...values }: AgentValues) {
  return {
    ...values,
    skills: JSON.stringify(values.skills),
    secrets: JSON.stringify(values.secrets),
    mcp_servers: values.mcp_servers ? JSON.stringify(values.mcp_servers) : null,
    harness: values.harness ? JSON.stringify(values.harness) : null,
    ...(harness_auth_secrets !== undefined
      ? { harness_auth_secrets: harness_auth_secrets ? JSON.stringify(harness_auth_secrets) : null }
      : {}),
  };
}

export async function insertAgent(
  db: Kysely<DB>,
  row: AgentValues & { uid: string; team_uid: string; created_by_uid: string; factory_uid?: string },
): Promise<void> {
  await db
    .insertInto('agent_identities')
    .values({
      ...columns(row),
      uid: row.uid,
      team_uid: row.team_uid,
      created_by_uid: row.created_by_uid,
      factory_uid: row.factory_uid ?? null,
    })
    .execute();
}

/** The agents a factory definition manages. */
export async function agentsOfFactory(db: Kysely<DB>, teamUid: string, factoryUid: string) {
  return db
    .selectFrom('agent_identities')
    .selectAll()
    .where('team_uid', '=', teamUid)
    .where('factory_uid', '=', factoryUid)
    .orderBy('name')
    .execute();
}

export async function updateAgent(db: Kysely<DB>, teamUid: string, uid: string, values: AgentValues): Promise<boolean> {
  const result = await db
    .updateTable('agent_identities')
    .set({ ...columns(values), updated_at: sql`clock_timestamp()` })
    .where('team_uid', '=', teamUid)
    .where('uid', '=', uid)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Deletes the agent; its API keys go with it in the same statement (ON DELETE CASCADE). */
export async function deleteAgent(db: Kysely<DB>, teamUid: string, uid: string): Promise<boolean> {
  const result = await db
    .deleteFrom('agent_identities')
    .where('team_uid', '=', teamUid)
    .where('uid', '=', uid)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
