import { type Kysely, sql } from 'kysely';
import type { DB } from '../../database.js';
import { ACTIVE_STATES, stateList } from '../../runs/index.js';

/** Reads of the execution engine: a run's files and its conversation's transcript. Writes go through RunLifecycle. */

/** A file that comes with a run: an API attachment or a webhook delivery's payload. */
export interface RunFile {
  file_name: string;
  data: Buffer;
}

export async function runAttachments(db: Kysely<DB>, runId: string): Promise<RunFile[]> {
  return db
    .selectFrom('run_attachments')
    .select(['file_name', 'data'])
    .where('run_id', '=', runId)
    .orderBy('position')
    .execute();
}

/**
 * The transcript of every execution of the runs in `conversationId` before (runId, executionId), in order. Only
 * the runs of runId's team count: a conversation ID a worker reported can never pull in another team's runs.
 */
export async function conversationHistory(db: Kysely<DB>, conversationId: string, runId: string, executionId: number) {
  return db
    .selectFrom('run_transcript as t')
    .innerJoin('runs as r', 'r.id', 't.run_id')
    .select(['t.execution_id', 't.stream', 't.line', 't.at'])
    .where('r.conversation_id', '=', conversationId)
    .where('r.team_uid', '=', (eb) => eb.selectFrom('runs as own').select('own.team_uid').where('own.id', '=', runId))
    .where((eb) => eb.or([eb('t.run_id', '<>', runId), eb('t.execution_id', '<', executionId)]))
    .orderBy('r.created_at')
    .orderBy('t.seq')
    .execute();
}

/**
 * What a run's earlier executions used, summed (`usage_before`: request_usage is it plus the current execution's):
 * a continued run's spend cap counts them. Null for a run's first execution.
 */
export async function usageBefore(db: Kysely<DB>, runId: string): Promise<Record<string, number> | null> {
  const row = await db.selectFrom('runs').select('usage_before').where('id', '=', runId).executeTakeFirst();
  return (row?.usage_before as Record<string, number> | null | undefined) ?? null;
}

/**
 * Which of these executions' workspaces (`<run id>.<execution id>`, see Workspaces.create) may still be in use by
 * some engine, whichever replica it runs on: the execution is the run's current one and the run is held (an engine
 * that died holds it until its lease is taken back), or its sandbox is still being stopped after a cancel (within
 * the lease its owner renewed last); or it is a failed setup's workspace kept for a debug window that is open or
 * has a debug agent at work.
 */
export async function workspacesInUse(
  db: Kysely<DB>,
  executions: Array<{ runId: string; executionId: number }>,
): Promise<Set<string>> {
  if (executions.length === 0) return new Set();
  const rows = await sql<{ name: string }>`
    SELECT w.run_id || '.' || w.execution_id AS name
    FROM unnest(${executions.map((execution) => execution.runId)}::text[],
      ${executions.map((execution) => execution.executionId)}::int[]) AS w(run_id, execution_id)
    JOIN runs r ON r.id = w.run_id
    WHERE (r.execution_id = w.execution_id AND (r.state IN (${stateList(ACTIVE_STATES)})
        OR (r.sandbox_running AND r.lease_expires_at > clock_timestamp())))
      OR (r.debug_session IS NOT NULL
        AND right(r.debug_session->>'workspace', length(w.run_id || '.' || w.execution_id) + 1)
          = '/' || w.run_id || '.' || w.execution_id
        AND (r.sandbox_running OR (r.debug_session->>'until')::timestamptz > clock_timestamp()))`.execute(db);
  return new Set(rows.rows.map((row) => row.name));
}

/** Whether some engine's heartbeat (presence.ts) is more recent than `staleSeconds`. */
export async function engineAlive(db: Kysely<DB>, staleSeconds: number): Promise<boolean> {
  const row = await db
    .selectFrom('engines')
    .select('id')
    .where(sql<boolean>`heartbeat_at >= clock_timestamp() - make_interval(secs => ${staleSeconds})`)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/** Where a run stands for whoever holds its executions outside this process (a Kubernetes Job): read by run ID. */
export interface RunHolding {
  id: string;
  execution_id: number;
  state: string;
  lease_owner: string | null;
  /** The agent had started (INPROGRESS), or its start was recorded (the takeback's rule: it may have run). */
  agent_started: boolean;
}

export async function runHoldings(db: Kysely<DB>, runIds: string[]): Promise<Map<string, RunHolding>> {
  if (runIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('runs')
    .select([
      'id',
      'execution_id',
      'state',
      'lease_owner',
      sql<boolean>`state = 'INPROGRESS' OR agent_start_intent IS NOT DISTINCT FROM execution_id`.as('agent_started'),
    ])
    .where('id', 'in', runIds)
    .execute();
  return new Map(rows.map((row) => [row.id, row as RunHolding]));
}
