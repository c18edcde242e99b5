import { ApiError } from '../platform/http/errors.js';
import type { RunState } from './schemas.js';

/** The run state machine's rules that the API enforces. */

export const TERMINAL_STATES: readonly RunState[] = ['SUCCEEDED', 'FAILED', 'ERROR', 'BLOCKED', 'CANCELLED'];
/** Queued or in progress: the states a cancel moves to CANCELLED. */
export const CANCELLABLE_STATES: readonly RunState[] = ['QUEUED', 'CLAIMED', 'INPROGRESS'];
/** An operator may also stop a run while it is being prepared. */
export const OPERATOR_CANCELLABLE_STATES: readonly RunState[] = ['QUEUED', 'PENDING', 'CLAIMED', 'INPROGRESS'];

export function isTerminal(state: string): boolean {
  return (TERMINAL_STATES as readonly string[]).includes(state);
}

export interface RunKind {
  source: string;
  execution_location: string;
  worker_host: string | null;
}

/** Self-hosted, local and source-control-action runs are not cancelled through this API. */
export function isRunTypeCancellable(run: RunKind): boolean {
  if (run.execution_location === 'LOCAL' || run.source === 'LOCAL') return false;
  if (run.source === 'GITHUB_ACTION') return false;
  return run.worker_host === null;
}

/** Why a cancel cannot proceed for a run in this state, or null when it can. Order follows the interface. */
export function cancelRefusal(run: RunKind & { state: string }): ApiError | null {
  if (!isRunTypeCancellable(run)) {
    return new ApiError(
      422,
      'operation_not_supported',
      'self-hosted, local and source-control action runs cannot be cancelled here',
    );
  }
  if (run.state === 'PENDING') {
    return new ApiError(409, 'conflict', 'the run is being prepared; retry the cancel in a moment', {
      retryable: true,
    });
  }
  if (isTerminal(run.state)) return new ApiError(400, 'invalid_request', `the run has already ended (${run.state})`);
  return null;
}
