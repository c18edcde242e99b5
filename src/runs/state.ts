import { type ApiError, conflict, invalidRequest, operationNotSupported } from '../platform/http/errors.js';
import { isTerminal } from './lifecycle/states.js';

/** Which runs the API cancels (the states and moves are in lifecycle/states.ts). */

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
    return operationNotSupported('self-hosted, local and source-control action runs cannot be cancelled here');
  }
  if (run.state === 'PENDING') {
    return conflict('the run is being prepared; retry the cancel in a moment', { retryable: true });
  }
  if (isTerminal(run.state)) return invalidRequest(`the run has already ended (${run.state})`);
  return null;
}
