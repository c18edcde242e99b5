import type { Kysely } from 'kysely';
import type { DB } from '../../database.js';
import type { Visibility } from '../visibility.js';
import { cancelRunIfActive } from './cancel.js';
import { claimRuns, claimWorkerRuns, type WorkerRef } from './claims.js';
import { closeDebugWindow, endDebugTurn, startDebugTurn } from './debug-window.js';
import { finishExecutions } from './finish.js';
import { addFollowup, type FollowupRoute } from './followups.js';
import { insertAttachments, insertRun, insertRuns } from './inserts.js';
import {
  clearSandboxIfCancelled,
  renewLeases,
  requeue,
  type Takeback,
  type TakebackOptions,
  takeBack,
} from './leases.js';
import {
  observeClaimed,
  observeCreated,
  observeEnded,
  observeExpiries,
  observeRenewals,
  observeStarted,
} from './metrics.js';
import { insertReportedEvent } from './reported-events.js';
import { deleteEndedRuns } from './retention.js';
import { type RunSignal, runSignals } from './signals.js';
import { type AgentStart, beginAgentStarts } from './start-intents.js';
import {
  CANCELLABLE_STATES,
  END_TRANSITIONS,
  type NamedTransition,
  RefusedTransitionError,
  type RunState,
  type TransitionName,
  transition,
} from './states.js';
import {
  appendTranscript,
  applyTransitions,
  insertEvents,
  returnInputs,
  stepOf,
  takeInputRows,
} from './transitions.js';
import type {
  CapacityLimits,
  ClaimedRun,
  EventRow,
  Finish,
  FinishResult,
  FollowupInput,
  NewAttachment,
  NewRun,
  TimelineEvent,
  TranscriptRow,
  Transition,
  TransitionResult,
} from './types.js';
import { recordUsage } from './usage.js';

/**
 * The one writer of the run lifecycle: run state and the lifecycle's columns, timeline events, follow-up inputs
 * and the transcript. Every state it writes is a move of the transition table (states.ts); a move made
 * conditionally (`WHERE state = ...`, the lease owner, the execution) changes nothing when the run has moved on,
 * as a race should. The engine's ledger, the worker hub and the runs service all write through it. Each run it
 * created or moved is signalled in process once the write has committed (signals.ts).
 */
export class RunLifecycle {
  constructor(
    private readonly db: Kysely<DB>,
    /** Inside a transaction of inTransaction: the signals it sends once it has committed. */
    private readonly pending?: RunSignal[],
  ) {}

  /** Signals committed moves; a move in a transaction waits for its commit (or, in a caller's, is not sent). */
  private send(signals: RunSignal[]): void {
    if (this.pending) this.pending.push(...signals);
    else if (!this.db.isTransaction) runSignals.emit(signals);
  }

  /** Retention: deletes a batch of runs ended before the date (see retention.ts); their artifacts' blob keys. */
  deleteEnded(endedBefore: Date, batch: number): Promise<{ runs: number; blobKeys: string[] }> {
    return deleteEndedRuns(this.db, endedBefore, batch);
  }

  /** The same lifecycle inside a caller's transaction. */
  within(db: Kysely<DB>): RunLifecycle {
    return new RunLifecycle(db);
  }

  /** Writes that commit together. */
  async inTransaction<T>(work: (lifecycle: RunLifecycle) => Promise<T>): Promise<T> {
    const pending: RunSignal[] = [];
    const result = await this.db.transaction().execute((trx) => work(new RunLifecycle(trx, pending)));
    runSignals.emit(pending);
    return result;
  }

  /**
   * Inserts queued runs with their `oz_run_created` events; with `limits`, tells whether they will wait. They are
   * not counted yet: the caller calls countCreated() once its transaction has committed (a rolled-back create
   * counts nothing).
   */
  insert(runs: NewRun[], limits?: CapacityLimits): Promise<{ atCapacity: boolean }> {
    checkQueued(runs);
    return insertRuns(this.db, runs, limits);
  }

  /** Counts runs created (hangar_runs_created_total) once the transaction that inserted them has committed. */
  countCreated(runs: readonly NewRun[]): void {
    observeCreated(runs);
    runSignals.emit(created(runs));
  }

  /** A run with its files, committed together. */
  async insertWithFiles(
    run: NewRun,
    files: NewAttachment[],
    limits?: CapacityLimits,
  ): Promise<{ atCapacity: boolean }> {
    checkQueued([run]);
    const result = await insertRun(this.db, run, files, limits);
    // Committed by insertRun's own transaction, unless this lifecycle is inside a caller's (which counts it then).
    if (!this.db.isTransaction) {
      observeCreated([run]);
      runSignals.emit(created([run]));
    }
    return result;
  }

  /** Files for the workspace of a run inserted in the same transaction. */
  attach(runId: string, files: NewAttachment[]): Promise<void> {
    return insertAttachments(this.db, runId, files);
  }

  /**
   * Cancels the run if it is still in `states`, the from-states of `cancel` or of `operator_cancel` (an instance
   * administrator's, which also stops a run being prepared); false when it is not (or `who` cannot see it).
   */
  async cancel(
    who: Visibility | 'operator',
    runId: string,
    cancelledBy: string,
    states: readonly RunState[] = CANCELLABLE_STATES,
  ): Promise<boolean> {
    const move = cancelMove(states);
    const cancelled = await cancelRunIfActive(this.db, who, runId, cancelledBy, move);
    if (cancelled) {
      observeEnded(this.db, [{ id: runId, state: 'CANCELLED' }]);
      this.send([moved(runId, move)]);
    }
    return cancelled;
  }

  /** Accepts a follow-up and routes it by the run's state (an ended run is queued for a new execution). */
  async followup(
    who: Visibility,
    runId: string,
    message: string,
    mode: string | undefined,
    origin: { via?: string } = {},
  ): Promise<FollowupRoute> {
    const route = await addFollowup(this.db, who, runId, message, mode, origin.via);
    if (route === 'new_execution') this.send([moved(runId, transition('restart'))]);
    return route;
  }

  /** The server's engine claims queued runs within the limits (QUEUED -> CLAIMED). */
  /** An event an agent reports about its own run; answers its sequence among the run events. */
  async reportEvent(event: { runId: string; executionId: number; eventType: string; refId: string | null }) {
    return insertReportedEvent(this.db, event);
  }

  async claim(engineId: string, leaseSeconds: number, limits: CapacityLimits, batch: number): Promise<ClaimedRun[]> {
    const runs = await claimRuns(this.db, engineId, leaseSeconds, limits, batch);
    observeClaimed(this.db, 'engine', runs);
    this.send(runs.map((run) => moved(run.id, transition('claim'))));
    return runs;
  }

  /** A self-hosted worker's queued runs are assigned to it (QUEUED -> PENDING). */
  async claimForWorker(worker: WorkerRef, limit: number, leaseSeconds: number): Promise<ClaimedRun[]> {
    const runs = await claimWorkerRuns(this.db, worker, limit, leaseSeconds);
    observeClaimed(this.db, 'worker', runs);
    this.send(runs.map((run) => moved(run.id, transition('dispatch'))));
    return runs;
  }

  /** Moves runs `owner` holds, each only if it is still in its `from` state under that owner. */
  async transition(owner: string, items: Transition[]): Promise<TransitionResult[]> {
    const results = await applyTransitions(this.db, owner, items);
    items.forEach((item, index) => {
      if (item.started && results[index]?.moved) observeStarted(item.harness, item.setupSeconds);
    });
    this.send(
      items.flatMap((item, index) => (results[index]?.moved ? [moved(item.runId, stepOf(item.from, item.to))] : [])),
    );
    return results;
  }

  /** Ends executions `owner` holds (or continues them when follow-ups wait), with their last transcript lines. */
  async finish(owner: string, items: Finish[]): Promise<FinishResult[]> {
    const { results, ended: columns } = await finishExecutions(this.db, owner, items);
    observeEnded(
      this.db,
      items.flatMap((item, index) => {
        const ended = {
          id: item.runId,
          state: item.outcome.state,
          errorCode: errorCodeOf(item),
          usage: item.outcome.usage,
        };
        if (results[index] === 'ended') return [ended];
        // A continued execution's tokens count too (the run ends later, with its next execution's usage).
        return results[index] === 'continued' ? [{ ...ended, continued: true }] : [];
      }),
      columns,
    );
    this.send(
      items.flatMap((item, index) => {
        if (results[index] === 'ended') return [moved(item.runId, END_TRANSITIONS[item.outcome.state])];
        return results[index] === 'continued' ? [moved(item.runId, transition('continue'))] : [];
      }),
    );
    return results;
  }

  /**
   * `owner` is about to spawn these executions' harnesses: the intent is recorded (a takeback then never queues them
   * again in silence) and each one's waiting follow-ups are read, in one statement.
   */
  beginAgentStarts(owner: string, starts: AgentStart[]): Promise<FollowupInput[][]> {
    return beginAgentStarts(this.db, owner, starts);
  }

  /** Puts a run `owner` holds whose agent never started back in the queue. */
  async requeue(run: { id: string; owner: string; executionId: number }, reason: string): Promise<void> {
    if (await requeue(this.db, run, reason)) this.send([moved(run.id, transition('requeue'))]);
  }

  async renewLeases(owner: string, runIds: string[], leaseSeconds: number): Promise<Set<string>> {
    const held = await renewLeases(this.db, owner, runIds, leaseSeconds);
    observeRenewals(held.size);
    return held;
  }

  /** Takes back the runs of engines that are gone and of executors that stopped renewing their leases. */
  async takeBack(options: TakebackOptions): Promise<Takeback> {
    const takeback = await takeBack(this.db, options);
    observeExpiries(takeback.taken);
    observeEnded(
      this.db,
      takeback.errored.map((id) => ({ id, state: 'ERROR', errorCode: 'resource_unavailable' })),
    );
    this.send([
      ...takeback.requeued.map((id) => moved(id, transition('requeue'))),
      ...takeback.errored.map((id) => moved(id, transition('lose'))),
    ]);
    return takeback;
  }

  clearSandboxIfCancelled(owner: string, runId: string, executionId: number): Promise<void> {
    return clearSandboxIfCancelled(this.db, owner, runId, executionId);
  }

  /** What an execution has used so far, on its run while it runs (see usage.ts): budgets count runs in flight. */
  recordUsage(owner: string, runId: string, executionId: number, usage: Record<string, number>): Promise<void> {
    return recordUsage(this.db, owner, runId, executionId, usage);
  }

  /** Appends timeline events of any runs, in the order given. */
  events(rows: EventRow[]): Promise<void> {
    return insertEvents(this.db, rows);
  }

  event(runId: string, executionId: number, type: string, payload?: Record<string, unknown>): Promise<void> {
    const event: TimelineEvent = { type, payload };
    return insertEvents(this.db, [{ runId, executionId, event }]);
  }

  transcript(rows: TranscriptRow[]): Promise<void> {
    return appendTranscript(this.db, rows);
  }

  /** Follow-ups not yet given to a harness, oldest first; they count as delivered from now on. */
  takeInputs(runId: string, purpose: 'agent' | 'debug'): Promise<FollowupInput[]> {
    return takeInputRows(this.db, runId, purpose);
  }

  /** Follow-ups that could not be written to the harness after all: the next execution takes them. */
  returnInputs(runId: string, seqs: string[]): Promise<void> {
    return returnInputs(this.db, runId, seqs);
  }

  /** A debug turn starts in a FAILED run's kept workspace: its execution, or undefined when the run moved on. */
  startDebugTurn(runId: string, conversationId: string): Promise<number | undefined> {
    return startDebugTurn(this.db, runId, conversationId);
  }

  endDebugTurn(runId: string, until: Date): Promise<void> {
    return endDebugTurn(this.db, runId, until);
  }

  closeDebugWindow(runId: string): Promise<void> {
    return closeDebugWindow(this.db, runId);
  }
}

function errorCodeOf(item: Finish): string | undefined {
  const code = item.outcome.statusMessage?.error_code;
  return typeof code === 'string' ? code : undefined;
}

/** The cancel that leaves exactly `states`. */
function cancelMove(states: readonly RunState[]): NamedTransition<'cancel' | 'operator_cancel'> {
  const same = (from: readonly RunState[]) =>
    from.length === states.length && from.every((state) => states.includes(state));
  const move = [transition('cancel'), transition('operator_cancel')].find((candidate) => same(candidate.from));
  if (!move) throw new RefusedTransitionError(states.join(', '), 'CANCELLED');
  return move;
}

function moved(runId: string, move: NamedTransition<TransitionName>): RunSignal {
  return { type: move.signal, runId, state: move.to, transition: move.name };
}

function created(runs: readonly NewRun[]): RunSignal[] {
  return runs.map((run) => ({ type: 'run:created', runId: run.id, state: 'QUEUED' }));
}

/** A run is born QUEUED: any other state would skip the moves of the transition table. */
function checkQueued(runs: NewRun[]): void {
  for (const run of runs) if (run.state !== 'QUEUED') throw new Error(`a new run must be QUEUED, not ${run.state}`);
}
