// The public surface of the runs slice: other slices and the composition root import only this module.
export { RunActivity } from './activity.js';
export { ARTIFACT_TYPES, type ArtifactType } from './artifact-types.js';
export type { AgentDirectory, SecretUser } from './collaborators.js';
export { type Conversation, normalizeConversation } from './conversation.js';
export {
  executionSecretUser,
  type PublishedPullRequest,
  publishedPullRequests,
  runCredentialStrategy,
} from './execution-facts.js';
export { registerHandoffRoutes } from './handoff-http.js';
export {
  type HarnessEvent,
  inputLine,
  parseEvent,
  protocolEvents,
  saidNow,
  type TaskMessage,
  type TaskOfExecution,
  taskMessage,
  type UserMessage,
} from './harness-protocol.js';
export { registerRunRoutes } from './http.js';
export { idempotencyKeyRetention } from './idempotency.js';
export type { WorkerRef } from './lifecycle/claims.js';
export { loadLifecycleFunctions } from './lifecycle/functions.js';
export { engineGraceSeconds, leaseRenewalIntervalMs, takebackCheckIntervalMs } from './lifecycle/lease-cadence.js';
export type { Takeback, TakebackOptions } from './lifecycle/leases.js';
export { RunLifecycle } from './lifecycle/run-lifecycle.js';
export { stateList } from './lifecycle/state-sql.js';
export {
  ACTIVE_STATES,
  CANCELLABLE_STATES,
  END_STATES,
  type EndState,
  endEventType,
  isActive,
  isCompletion,
  isTerminal,
  OPERATOR_CANCELLABLE_STATES,
  RUN_STATES,
  type RunState,
  TERMINAL_STATES,
  unreachable,
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
  TranscriptRow,
  Transition,
  TransitionResult,
} from './lifecycle/types.js';
export { metadataProblem } from './metadata.js';
export { RunOutputs, TRANSCRIPT_LINK_SECONDS } from './output.js';
export { registerRunOutputRoutes } from './output-http.js';
export { type OverviewWindow, type RunOverview, runOverview } from './overview.js';
export { overviewFold } from './overview-fold.js';
export { progressPayload } from './progress.js';
export { type QueueDepth, queueDepth } from './queue-depth.js';
export type { QueueFacts, QueueReason } from './queue-reason.js';
export { registerRedirectRoutes } from './redirect-http.js';
export { deleteExpiredRuns, PGLITE_BATCH_MS, runRetention } from './retention.js';
export { AgentConfig, CreateRunResponse, HARNESS_TYPES, RUN_MODES, RunIdParams, type RunItem } from './schemas.js';
export { type CreatedWithin, type RunRequest, RunsService } from './service.js';
export { registerShareRoutes } from './sharing/http.js';
export { RunSharing, SHARED_LINK_ACTOR } from './sharing/service.js';
export { monthStart, teamSpendSince } from './spend.js';
export { endedRunStates, runExists } from './store.js';
export { type RunEventItem, type RunPlace, runEventsSince, runPlaces } from './tree.js';
export { startTriggeredRuns, type TriggerDecision, type TriggeredRun, type TriggerOutcome } from './trigger.js';
export { type Visibility, visible } from './visibility.js';
