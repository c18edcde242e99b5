import type { Kysely } from 'kysely';
import type { DB } from '../database.js';
import { ApiError } from '../platform/http/errors.js';
import type { CreatedWithin, RunRequest, RunsService } from './service.js';

/**
 * The one way from a trigger (a schedule's tick, a webhook delivery, a GitHub or Slack event) to runs: the trigger
 * decides inside a transaction, the runs it asks for are created in that same transaction, each outcome is recorded
 * there too (a tick moved on, a firing, a replay key given back), and only once it has committed are the new runs
 * counted and the engines woken. A trigger's slice writes what to start and what to record, never the protocol, so
 * that a run is never announced for a transaction that rolled back, nor recorded apart from its creation.
 */

/** One run a trigger asks for, with what the trigger wants back beside its outcome (its schedule, automation...). */
export interface TriggeredRun<T> {
  item: T;
  request: RunRequest;
}

/** What became of one asked-for run: its ID, or why it was refused (an agent gone, a budget spent...). */
export type TriggerOutcome<T> =
  | { item: T; runId: string; refused?: undefined }
  | { item: T; runId?: undefined; refused: ApiError };

/** What a trigger decided inside the transaction: the runs to create and how to record what became of them. */
export interface TriggerDecision<T, R> {
  runs: TriggeredRun<T>[];
  /**
   * Called in the same transaction once the runs are created, with an outcome per asked-for run, in order (also when
   * none was asked for: a trigger that matched nothing may still have to mark what it looked at). What it returns is
   * what startTriggeredRuns answers once the transaction has committed; throwing rolls everything back.
   */
  record(trx: Kysely<DB>, outcomes: TriggerOutcome<T>[]): Promise<R>;
}

/**
 * Runs `decide` in a new transaction on `db`, creates the runs it asks for there, records their outcomes there, and
 * after the commit announces the created runs. Answers what `record` answered.
 */
export async function startTriggeredRuns<T, R>(
  db: Kysely<DB>,
  runs: RunsService,
  decide: (trx: Kysely<DB>) => Promise<TriggerDecision<T, R>>,
): Promise<R> {
  const { value, created } = await db.transaction().execute(async (trx) => {
    const decision = await decide(trx);
    // Nothing asked for costs no statement (a replayed delivery, a batch that matched nothing).
    const made: CreatedWithin =
      decision.runs.length === 0
        ? Object.assign([], { created: [] })
        : await runs.createWithin(
            trx,
            decision.runs.map((run) => run.request),
          );
    const outcomes = made.map(
      (outcome, i): TriggerOutcome<T> =>
        outcome instanceof ApiError
          ? { item: decision.runs[i]!.item, refused: outcome }
          : { item: decision.runs[i]!.item, runId: outcome.run_id },
    );
    return { value: await decision.record(trx, outcomes), created: made.created };
  });
  runs.announceQueued(created);
  return value;
}
