/**
 * The run state machine: every state, the groups the code asks about, and every move the code makes, by name
 * (NAMED_TRANSITIONS). Each lifecycle file asks for its move by name and writes its states and timeline event; the
 * SQL functions (functions.sql) make the same moves and name the same groups. No database code here (their SQL form is state-sql.ts): the client verbs
 * use these states too.
 */

/** In the order the API documents them. */
export const RUN_STATES = [
  'QUEUED',
  'PENDING',
  'CLAIMED',
  'INPROGRESS',
  'SUCCEEDED',
  'FAILED',
  'BLOCKED',
  'ERROR',
  'CANCELLED',
] as const;
export type RunState = (typeof RUN_STATES)[number];

/** How an execution ends by itself (a cancel ends it from outside, as CANCELLED). */
export const END_STATES = ['SUCCEEDED', 'FAILED', 'ERROR', 'BLOCKED'] as const;
export type EndState = (typeof END_STATES)[number];

export const TERMINAL_STATES: readonly RunState[] = ['SUCCEEDED', 'FAILED', 'ERROR', 'BLOCKED', 'CANCELLED'];
/** Held by an executor under a lease; they count against the concurrency limits. */
export const ACTIVE_STATES = ['PENDING', 'CLAIMED', 'INPROGRESS'] as const;
/** Held, but its agent has not started: it can go back to the queue as if nothing happened. */
export const REQUEUABLE_STATES = ['PENDING', 'CLAIMED'] as const;
/** Queued or in progress: the states a cancel moves to CANCELLED. */
export const CANCELLABLE_STATES: readonly RunState[] = ['QUEUED', 'CLAIMED', 'INPROGRESS'];
/** An operator may also stop a run while it is being prepared. */
export const OPERATOR_CANCELLABLE_STATES: readonly RunState[] = ['QUEUED', 'PENDING', 'CLAIMED', 'INPROGRESS'];

/**
 * The in-process signal a committed move sends (signals.ts): `run:claimed` when an executor holds the run,
 * `run:dispatched` when it waits for a self-hosted worker to take it, `run:started` when its agent started,
 * `run:queued` when it is back in the queue, `run:ended` at any end (a cancel too).
 */
export type MoveSignal = 'run:claimed' | 'run:dispatched' | 'run:started' | 'run:queued' | 'run:ended';

/** A move the code makes, by name: the states it leaves, the state it reaches, the timeline event it records. */
export interface NamedTransition<Name extends string = string> {
  name: Name;
  from: readonly RunState[];
  to: RunState;
  event: string;
  signal: MoveSignal;
}

function named<const Name extends string>(
  name: Name,
  from: readonly RunState[],
  to: RunState,
  event: string,
  signal: MoveSignal,
): NamedTransition<Name> {
  return { name, from, to, event, signal };
}

/**
 * Every move the code makes. `claim` is the server's engine claiming (it goes through PENDING in the same statement
 * and records run_dispatched before oz_run_claimed); `dispatch` a self-hosted worker's claim, which the worker then
 * takes (`take`). A held run ends (one name per end state), goes back to the queue (`requeue`: its executor let it
 * go or its lease passed before its agent started; `continue`: follow-ups arrived as it ended), is lost (`lose`: its
 * lease passed once its agent may have run) or is cancelled; an ended run is queued again by a follow-up (`restart`).
 */
export const NAMED_TRANSITIONS = [
  named('claim', ['QUEUED'], 'CLAIMED', 'oz_run_claimed', 'run:claimed'),
  named('dispatch', ['QUEUED'], 'PENDING', 'run_dispatched', 'run:dispatched'),
  named('take', ['PENDING'], 'CLAIMED', 'oz_run_claimed', 'run:claimed'),
  named('start', ['CLAIMED'], 'INPROGRESS', 'agent_started', 'run:started'),
  named('succeed', ACTIVE_STATES, 'SUCCEEDED', 'oz_run_done', 'run:ended'),
  named('block', ACTIVE_STATES, 'BLOCKED', 'oz_run_blocked', 'run:ended'),
  named('fail', ACTIVE_STATES, 'FAILED', 'oz_run_failed', 'run:ended'),
  named('error', ACTIVE_STATES, 'ERROR', 'oz_run_errored', 'run:ended'),
  named('continue', ACTIVE_STATES, 'QUEUED', 'run_continued', 'run:queued'),
  named('requeue', REQUEUABLE_STATES, 'QUEUED', 'run_requeued', 'run:queued'),
  named('lose', ['CLAIMED', 'INPROGRESS'], 'ERROR', 'oz_run_errored', 'run:ended'),
  named('cancel', CANCELLABLE_STATES, 'CANCELLED', 'oz_run_cancelled', 'run:ended'),
  named('operator_cancel', OPERATOR_CANCELLABLE_STATES, 'CANCELLED', 'oz_run_cancelled', 'run:ended'),
  named('restart', TERMINAL_STATES, 'QUEUED', 'followup_received', 'run:queued'),
] as const;

export type TransitionName = (typeof NAMED_TRANSITIONS)[number]['name'];

const BY_NAME = new Map<string, NamedTransition<TransitionName>>(NAMED_TRANSITIONS.map((move) => [move.name, move]));

/** The move of that name: what each lifecycle file asks for before it writes. */
export function transition<Name extends TransitionName>(name: Name): NamedTransition<Name> {
  return BY_NAME.get(name) as NamedTransition<Name>;
}

/** The end each end state is reached by (an execution's own end; a cancel is `cancel`). */
export const END_TRANSITIONS: Readonly<Record<EndState, NamedTransition<TransitionName>>> = {
  SUCCEEDED: transition('succeed'),
  BLOCKED: transition('block'),
  FAILED: transition('fail'),
  ERROR: transition('error'),
};

/** The names that cover the move from -> to (several may: `requeue` and `continue` both go PENDING -> QUEUED). */
export function namesOf(from: string, to: string): TransitionName[] {
  return NAMED_TRANSITIONS.filter((move) => move.to === to && (move.from as readonly string[]).includes(from)).map(
    (move) => move.name,
  );
}

/** from -> to for every state: the union of the named moves. */
export const TRANSITIONS: Readonly<Record<RunState, readonly RunState[]>> = movesByState();

function movesByState(): Record<RunState, RunState[]> {
  const moves = {} as Record<RunState, RunState[]>;
  for (const from of RUN_STATES) moves[from] = RUN_STATES.filter((to) => namesOf(from, to).length > 0);
  return moves;
}

export function isRunState(state: string): state is RunState {
  return (RUN_STATES as readonly string[]).includes(state);
}

export function isTerminal(state: string): boolean {
  return (TERMINAL_STATES as readonly string[]).includes(state);
}

export function isActive(state: string): boolean {
  return (ACTIVE_STATES as readonly string[]).includes(state);
}

export function canMove(from: string, to: string): boolean {
  return isRunState(from) && (TRANSITIONS[from] as readonly string[]).includes(to);
}

/** A move the table refuses is a bug in the code that asked for it, never a race (races are conditional writes). */
export class RefusedTransitionError extends Error {
  constructor(from: string, to: string) {
    super(`a run cannot move from ${from} to ${to}`);
  }
}

/** Throws unless every state of `from` may move to `to`. */
export function checkMove(from: string | readonly string[], to: RunState): void {
  for (const state of typeof from === 'string' ? [from] : from)
    if (!canMove(state, to)) throw new RefusedTransitionError(state, to);
}

/** The timeline event an execution's end writes: its end transition's. */
export function endEventType(state: EndState): string {
  return END_TRANSITIONS[state].event;
}

/** Whether an end is the agent's own (it finished or asked a question) rather than a failure. */
export function isCompletion(state: EndState): boolean {
  switch (state) {
    case 'SUCCEEDED':
    case 'BLOCKED':
      return true;
    case 'FAILED':
    case 'ERROR':
      return false;
    default:
      return unreachable(state);
  }
}

/** The compile-time check of an exhaustive switch: a new case that is not handled does not compile. */
export function unreachable(value: never): never {
  throw new Error(`unhandled case ${String(value)}`);
}
