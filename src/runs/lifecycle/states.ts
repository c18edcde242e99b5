/**
 * The run state machine: every state, the groups the code asks about, and which moves between states the code
 * makes. RunLifecycle checks each state it writes against TRANSITIONS; the SQL functions (functions.sql) make the
 * same moves and name the same groups. No database code here (their SQL form is state-sql.ts): the client verbs
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
 * Every move the code makes, from -> to. QUEUED -> CLAIMED is the server's engine claiming (it goes through
 * PENDING in the same statement); QUEUED -> PENDING a self-hosted worker's claim, which the worker then takes
 * (PENDING -> CLAIMED). A held run ends, goes back to the queue (requeued, its lease expired, or follow-ups
 * arrived as it ended) or is cancelled; an ended run is queued again by a follow-up.
 */
export const TRANSITIONS: Readonly<Record<RunState, readonly RunState[]>> = {
  QUEUED: ['PENDING', 'CLAIMED', 'CANCELLED'],
  PENDING: ['CLAIMED', 'QUEUED', 'CANCELLED', ...END_STATES],
  CLAIMED: ['INPROGRESS', 'QUEUED', 'CANCELLED', ...END_STATES],
  INPROGRESS: ['QUEUED', 'CANCELLED', ...END_STATES],
  SUCCEEDED: ['QUEUED'],
  FAILED: ['QUEUED'],
  BLOCKED: ['QUEUED'],
  ERROR: ['QUEUED'],
  CANCELLED: ['QUEUED'],
};

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

/** The timeline event an execution's end writes. */
export function endEventType(state: EndState): string {
  switch (state) {
    case 'SUCCEEDED':
      return 'oz_run_done';
    case 'BLOCKED':
      return 'oz_run_blocked';
    case 'FAILED':
      return 'oz_run_failed';
    case 'ERROR':
      return 'oz_run_errored';
    default:
      return unreachable(state);
  }
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
