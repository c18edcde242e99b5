// The public surface of the runs slice: other slices and the composition root import only this module.
export { RunActivity } from './activity.js';
export { registerRunRoutes } from './http.js';
export { idempotencyKeyRetention } from './idempotency.js';
export { metadataProblem } from './metadata.js';
export { registerRunOutputRoutes } from './output-http.js';
export { registerRedirectRoutes } from './redirect-http.js';
export { registerHandoffRoutes } from './handoff-http.js';
export { RunOutputs, TRANSCRIPT_LINK_SECONDS } from './output.js';
export { AgentConfig, CreateRunResponse, HARNESS_TYPES, RUN_MODES, RunIdParams, type RunItem } from './schemas.js';
export type { AgentDirectory } from './collaborators.js';
export { type CreatedWithin, RunsService, type RunRequest } from './service.js';
export { startTriggeredRuns, type TriggerDecision, type TriggeredRun, type TriggerOutcome } from './trigger.js';
export type { QueueFacts, QueueReason } from './queue-reason.js';

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
export { stateList } from './lifecycle/state-sql.js';
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
export { endedRunStates, runExists } from './store.js';
export { runEventsSince, runPlaces, type RunEventItem, type RunPlace } from './tree.js';
export { visible, type Visibility } from './visibility.js';
export { progressPayload } from './progress.js';
export { ARTIFACT_TYPES, type ArtifactType } from './artifact-types.js';
export {
  inputLine,
  parseEvent,
  protocolEvents,
  saidNow,
  taskMessage,
  type HarnessEvent,
  type TaskMessage,
  type TaskOfExecution,
  type UserMessage,
} from './harness-protocol.js';
export { normalizeConversation, type Conversation } from './conversation.js';
export { engineGraceSeconds, leaseRenewalIntervalMs, takebackCheckIntervalMs } from './lifecycle/lease-cadence.js';
export type { Takeback, TakebackOptions } from './lifecycle/leases.js';
export { monthStart, teamSpendSince } from './spend.js';
export { deleteExpiredRuns, PGLITE_BATCH_MS, runRetention } from './retention.js';
export { queueDepth, type QueueDepth } from './queue-depth.js';
export { runOverview, type OverviewWindow, type RunOverview } from './overview.js';
export { overviewFold } from './overview-fold.js';
export {
  executionSecretUser,
  publishedPullRequests,
  type PublishedPullRequest,
} from './execution-facts.js';
export type { SecretUser } from './collaborators.js';
