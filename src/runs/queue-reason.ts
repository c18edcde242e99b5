import { type Kysely, sql } from 'kysely';
import type { DB } from '../database.js';
import { stateList } from './lifecycle/state-sql.js';
import { ACTIVE_STATES } from './lifecycle/states.js';
import type { CapacityLimits } from './lifecycle/types.js';

/**
 * Why a run waits (issue 26): a QUEUED or PENDING run says so in words on its create answer, GET and list items,
 * so that a first start without a model key does not leave people watching a run that never moves.
 */
export interface QueueReason {
  code: QueueReasonCode;
  message: string;
}

export type QueueReasonCode =
  /** No engine that can execute runs is alive: no model key and no harness, or no engine process at all. */
  | 'no_harness'
  /** The server's concurrency limit (HANGAR_MAX_CONCURRENT_RUNS) is reached. */
  | 'at_capacity'
  /** The team's concurrency limit (HANGAR_MAX_CONCURRENT_RUNS_PER_TEAM) is reached. */
  | 'team_at_capacity'
  /** A self-hosted worker runs it: none of that host is connected, or one was offered it and has not taken it. */
  | 'waiting_for_worker'
  /** Nothing holds it back: an engine takes it at its next pass. */
  | 'waiting_for_engine';

/** What the runs slice asks of the rest of the server to explain a wait (the composition root provides it). */
export interface QueueFacts {
  /** Whether an engine that executes runs is alive (its heartbeat is recent). */
  engineAlive(db: Kysely<DB>): Promise<boolean>;
  /** Whether a self-hosted worker of `host` is connected for the team. */
  workerConnected(db: Kysely<DB>, teamUid: string, host: string): Promise<boolean>;
  /**
   * What to say when no engine is alive, in people's words and naming what to set: this process knows why it has
   * none (no model key, no harness) or that it serves the API only.
   */
  noEngine: string;
  limits: CapacityLimits;
}

export interface WaitingRun {
  state: string;
  team_uid: string;
  worker_host: string | null;
}

export function isWaiting(state: string): boolean {
  return state === 'QUEUED' || state === 'PENDING';
}

/**
 * Explains the waits of several runs with the facts read once (a list page): undefined for a run that does not
 * wait. Capacity counts are the claim function's (hangar_at_capacity): runs held by the server's engines.
 */
export async function queueReasons(
  db: Kysely<DB>,
  facts: QueueFacts,
  runs: WaitingRun[],
): Promise<Array<QueueReason | undefined>> {
  const waiting = runs.filter((run) => isWaiting(run.state));
  if (waiting.length === 0) return runs.map(() => undefined);
  const onServer = waiting.filter((run) => run.worker_host === null);
  const engine = onServer.length > 0 ? await facts.engineAlive(db) : true;
  const teams = [...new Set(onServer.map((run) => run.team_uid))];
  const busy = engine && teams.length > 0 ? await activeCounts(db, teams) : { total: 0, perTeam: new Map() };
  const workers = new Map<string, boolean>();
  for (const run of waiting) {
    if (run.worker_host === null || run.state === 'PENDING') continue;
    const key = `${run.team_uid}\u0000${run.worker_host}`;
    if (!workers.has(key)) workers.set(key, await facts.workerConnected(db, run.team_uid, run.worker_host));
  }
  return runs.map((run) => {
    if (!isWaiting(run.state)) return undefined;
    if (run.worker_host !== null) {
      const host = run.worker_host;
      if (run.state === 'PENDING')
        return {
          code: 'waiting_for_worker',
          message: `Worker ${host} was offered this run and has not started it yet.`,
        };
      return workers.get(`${run.team_uid}\u0000${host}`)
        ? {
            code: 'waiting_for_worker',
            message: `Waiting for worker ${host}: it is connected and busy; the run starts when it has room.`,
          }
        : {
            code: 'waiting_for_worker',
            message: `Waiting for worker ${host}: no worker of that host is connected. Start one with \`hangar worker --worker-id ${host}\` and a worker key of this team.`,
          };
    }
    if (!engine) return { code: 'no_harness', message: facts.noEngine };
    if (busy.total >= facts.limits.global)
      return {
        code: 'at_capacity',
        message: `The server is at capacity: ${busy.total} runs are executing, the limit (HANGAR_MAX_CONCURRENT_RUNS) is ${facts.limits.global}. The run starts when one ends.`,
      };
    const team = busy.perTeam.get(run.team_uid) ?? 0;
    if (team >= facts.limits.perTeam)
      return {
        code: 'team_at_capacity',
        message: `The team is at capacity: ${team} of its runs are executing, the limit per team (HANGAR_MAX_CONCURRENT_RUNS_PER_TEAM) is ${facts.limits.perTeam}. The run starts when one ends.`,
      };
    return { code: 'waiting_for_engine', message: 'Waiting for an engine to pick it up; it should start in a moment.' };
  });
}

/** Runs the server's engines hold, in all and for each of `teams` (the claim's own count of active runs). */
async function activeCounts(db: Kysely<DB>, teams: string[]): Promise<{ total: number; perTeam: Map<string, number> }> {
  const rows = await sql<{ team_uid: string; n: number }>`
    SELECT team_uid, count(*)::int AS n FROM runs
    WHERE state IN (${stateList(ACTIVE_STATES)}) AND worker_host IS NULL GROUP BY team_uid`.execute(db);
  let total = 0;
  const perTeam = new Map<string, number>();
  for (const row of rows.rows) {
    total += row.n;
    if (teams.includes(row.team_uid)) perTeam.set(row.team_uid, row.n);
  }
  return { total, perTeam };
}
