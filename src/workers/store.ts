import { type Kysely, sql } from 'kysely';
import type { DB } from '../database.js';
import { rfc3339 } from '../platform/time.js';
import { ACTIVE_STATES, type ClaimedRun } from '../runs/index.js';

/** Queries of the workers slice: presence of connections, the runs a worker holds, reported skills. */

/** The lease owner of a team's worker runs: any connection of that worker may act on them. */
export function workerOwner(teamUid: string, workerHost: string): string {
  return `worker:${teamUid}:${workerHost}`;
}

export async function insertConnection(
  db: Kysely<DB>,
  row: { id: string; team_uid: string; worker_host: string; replica: string },
): Promise<void> {
  await db.insertInto('worker_connections').values(row).execute();
}

export async function deleteConnection(db: Kysely<DB>, id: string): Promise<void> {
  await db.deleteFrom('worker_connections').where('id', '=', id).execute();
}

/** Marks this replica's connections alive and removes rows no replica has refreshed for `staleSeconds` (theirs died). */
export async function refreshConnections(db: Kysely<DB>, ids: string[], staleSeconds: number): Promise<void> {
  if (ids.length > 0) {
    await db
      .updateTable('worker_connections')
      .set({ last_seen_at: sql`clock_timestamp()` })
      .where('id', 'in', ids)
      .execute();
  }
  await db
    .deleteFrom('worker_connections')
    .where(sql<boolean>`last_seen_at < clock_timestamp() - make_interval(secs => ${staleSeconds})`)
    .execute();
}

export interface ConnectedWorker {
  worker_host: string;
  connection_count: number;
  connected_at: string;
  last_seen_at: string;
}

export async function connectedWorkers(
  db: Kysely<DB>,
  teamUid: string,
  staleSeconds: number,
): Promise<ConnectedWorker[]> {
  const rows = await db
    .selectFrom('worker_connections')
    .select([
      'worker_host',
      sql<number>`count(*)::int`.as('connection_count'),
      sql<Date>`min(connected_at)`.as('connected_at'),
      sql<Date>`max(last_seen_at)`.as('last_seen_at'),
    ])
    .where('team_uid', '=', teamUid)
    .where(sql<boolean>`last_seen_at >= clock_timestamp() - make_interval(secs => ${staleSeconds})`)
    .groupBy('worker_host')
    .orderBy('worker_host')
    .execute();
  return rows.map((row) => ({
    ...row,
    connected_at: rfc3339(row.connected_at),
    last_seen_at: rfc3339(row.last_seen_at),
  }));
}

/** Whether the run's current execution is `executionId` and held by `owner` (in PENDING, CLAIMED or INPROGRESS). */
export async function holds(db: Kysely<DB>, owner: string, runId: string, executionId: number): Promise<boolean> {
  const row = await db
    .selectFrom('runs')
    .select('id')
    .where('id', '=', runId)
    .where('lease_owner', '=', owner)
    .where('execution_id', '=', executionId)
    .where('state', 'in', ACTIVE_STATES)
    .executeTakeFirst();
  return row !== undefined;
}

/** The team and environment of a run whose current execution `executionId` `owner` holds; undefined when it does not. */
export async function heldRun(
  db: Kysely<DB>,
  owner: string,
  runId: string,
  executionId: number,
): Promise<{ team_uid: string; environment_id: string | null } | undefined> {
  return db
    .selectFrom('runs')
    .select(['team_uid', 'environment_id'])
    .where('id', '=', runId)
    .where('lease_owner', '=', owner)
    .where('execution_id', '=', executionId)
    .where('state', 'in', ACTIVE_STATES)
    .executeTakeFirst();
}

/**
 * A run whose current execution is `executionId` and still under way, as a claim returns it, with who holds it: what
 * a run pod (an execution credential) is given when it connects. Undefined once the execution has ended.
 */
export async function heldExecution(
  db: Kysely<DB>,
  runId: string,
  executionId: number,
): Promise<(ClaimedRun & { lease_owner: string; current_state: string }) | undefined> {
  const row = await db
    .selectFrom('runs')
    .select([
      'id',
      'team_uid',
      'execution_id',
      'prompt',
      'agent_config',
      'environment_id',
      'conversation_id',
      'harness',
      'attachment_count',
      'state as current_state',
      'lease_owner',
      'trace_parent',
    ])
    .where('id', '=', runId)
    .where('execution_id', '=', executionId)
    .where('state', 'in', ACTIVE_STATES)
    .where('lease_owner', 'is not', null)
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    ...row,
    agent_config: row.agent_config as Record<string, unknown>,
    lease_owner: row.lease_owner!,
    // A pod's worker never takes its run (PENDING -> CLAIMED): whoever created its Job claimed it.
    state: 'CLAIMED',
  };
}

export interface ReportedSkill {
  path: string;
  name: string;
  description: string;
  base_prompt: string;
}

/** Replaces the skills a worker reported, as one change. */
export async function replaceSkills(
  db: Kysely<DB>,
  teamUid: string,
  workerHost: string,
  skills: ReportedSkill[],
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx
      .deleteFrom('worker_skills')
      .where('team_uid', '=', teamUid)
      .where('worker_host', '=', workerHost)
      .execute();
    if (skills.length === 0) return;
    const unique = new Map(skills.map((skill) => [skill.path, skill]));
    await trx
      .insertInto('worker_skills')
      .values(
        [...unique.values()].map((skill) => ({
          team_uid: teamUid,
          worker_host: workerHost,
          skill_path: skill.path,
          name: skill.name,
          description: skill.description,
          base_prompt: skill.base_prompt,
        })),
      )
      .execute();
  });
}

export async function reportedSkills(db: Kysely<DB>, teamUid: string) {
  return db
    .selectFrom('worker_skills')
    .selectAll()
    .where('team_uid', '=', teamUid)
    .orderBy('worker_host')
    .orderBy('skill_path')
    .execute();
}

/** Self-hosted worker connections alive across every team and replica, and the distinct workers they are (metrics). */
export async function workerConnectionCounts(
  db: Kysely<DB>,
  staleSeconds: number,
): Promise<{ connections: number; workers: number }> {
  const row = await db
    .selectFrom('worker_connections')
    .select([
      sql<number>`count(*)::int`.as('connections'),
      sql<number>`count(DISTINCT (team_uid, worker_host))::int`.as('workers'),
    ])
    .where(sql<boolean>`last_seen_at >= clock_timestamp() - make_interval(secs => ${staleSeconds})`)
    .executeTakeFirstOrThrow();
  return row;
}

/** Whether a worker of `workerHost` is connected for the team (a connection refreshed within `staleSeconds`). */
export async function workerConnected(
  db: Kysely<DB>,
  teamUid: string,
  workerHost: string,
  staleSeconds: number,
): Promise<boolean> {
  const row = await db
    .selectFrom('worker_connections')
    .select('id')
    .where('team_uid', '=', teamUid)
    .where('worker_host', '=', workerHost)
    .where(sql<boolean>`last_seen_at >= clock_timestamp() - make_interval(secs => ${staleSeconds})`)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}
