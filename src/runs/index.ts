/** The runs slice's public surface: what other slices and the composition root use. */

export { RunLifecycle } from './lifecycle/run-lifecycle.js';
export { loadLifecycleFunctions } from './lifecycle/functions.js';
export type { WorkerRef } from './lifecycle/claims.js';
export {
  ACTIVE_STATES,
  CANCELLABLE_STATES,
  END_STATES,
  endEventType,
  isActive,
  isCompletion,
  isTerminal,
  OPERATOR_CANCELLABLE_STATES,
  RUN_STATES,
  TERMINAL_STATES,
  unreachable,
  type EndState,
  type RunState,
} from './lifecycle/states.js';
export type {
  CapacityLimits,
  ClaimedRun,
  EventRow,
  Finish,
  FinishResult,
  FollowupInput,
  NewAttachment,
  NewRun,
  Outcome,
  TimelineEvent,
  Transition,
  TransitionResult,
  TranscriptRow,
} from './lifecycle/types.js';
export { runExists } from './store.js';
export { visible, type Visibility } from './visibility.js';
