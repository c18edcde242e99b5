import type { Selectable } from 'kysely';
import type { RunsTable } from '../tables.js';
import type { EndState, RunState } from './states.js';

/** What RunLifecycle's callers hand it and get back. */

/** The columns a new run sets; the others take their defaults. */
export const NEW_RUN_COLUMNS = [
  'id',
  'team_uid',
  'title',
  'prompt',
  'state',
  'source',
  'execution_location',
  'mode',
  'scope_type',
  'scope_uid',
  'agent_config',
  'config_name',
  'model_id',
  'skill_spec',
  'agent_skill',
  'environment_id',
  'worker_host',
  'schedule',
  'schedule_id',
  'schedule_tick',
  'parent_run_id',
  'conversation_id',
  'creator_type',
  'creator_uid',
  'executor_type',
  'executor_uid',
  'metadata',
  'interactive',
  'attachment_count',
  'root_run_id',
  'automation_id',
  'factory_uid',
  'trigger_url',
] as const satisfies ReadonlyArray<keyof RunsTable>;

/** A run to insert: its columns as read back (schedule_id is taken from `schedule`). */
export type NewRun = Pick<Selectable<RunsTable>, Exclude<(typeof NEW_RUN_COLUMNS)[number], 'schedule_id'>>;

export interface NewAttachment {
  file_name: string;
  mime_type: string;
  data: Buffer;
}

/** Concurrency limits of executing runs (PENDING, CLAIMED or INPROGRESS), across replicas. */
export interface CapacityLimits {
  global: number;
  perTeam: number;
}

export interface ClaimedRun {
  id: string;
  team_uid: string;
  execution_id: number;
  prompt: string;
  agent_config: Record<string, unknown>;
  environment_id: string | null;
  conversation_id: string | null;
  harness: string | null;
  /** Files that come with the run, to write into its workspace (see runAttachments). */
  attachment_count: number;
  /**
   * CLAIMED when the claimer is the executor (the server's engine takes a run through PENDING in its claim);
   * PENDING when the executor still has to take it (a run assigned to a self-hosted worker).
   */
  state: 'PENDING' | 'CLAIMED';
  /** The traceparent of what created the run (tracing on): its execution's spans join that trace. */
  trace_parent?: string | null;
}

export interface TimelineEvent {
  type: string;
  payload?: Record<string, unknown> | undefined;
}

/** One owned run moving from one active state to the next, with its timeline events. */
export interface Transition {
  runId: string;
  executionId: number;
  from: RunState;
  to: RunState;
  events: TimelineEvent[];
  /** The agent starts: sets started_at (first time only) and marks the sandbox running. */
  started?: boolean;
  conversationId?: string;
  harness?: string;
  /** The catalogue model a built-in harness uses (the run's own, or the default it fell back to). */
  modelId?: string;
  /** Also take the run's follow-ups not yet given to its agent (oldest first), in the same statement. */
  takeInputs?: boolean;
  /**
   * With takeInputs: only those up to this `seq` (the ones the harness was started with); later ones stay for the
   * executor to deliver or put back.
   */
  takeInputsUpTo?: string;
  /** With started: how long the execution took from its claim to this start (hangar_run_setup_seconds). */
  setupSeconds?: number;
}

export interface TransitionResult {
  /** False when the run is no longer this engine's execution in that state (cancelled, or taken back). */
  moved: boolean;
  inputs: string[];
}

export interface EventRow {
  runId: string;
  executionId: number;
  event: TimelineEvent;
}

export interface TranscriptRow {
  run_id: string;
  execution_id: number;
  stream: 'input' | 'output';
  line: string;
}

/** How an execution ends; its timeline event follows from the state (endEventType). */
export interface Outcome {
  state: EndState;
  statusMessage: Record<string, unknown> | null;
  usage: Record<string, number> | null;
  eventPayload?: Record<string, unknown>;
  /** Keep the workspace for debugging: `{owner, workspace, until}`. */
  debugSession?: { owner: string; workspace: string; until: string };
}

export interface Finish {
  runId: string;
  executionId: number;
  outcome: Outcome;
  /** Events before the outcome's own (`vm_shutdown`), recorded whenever the execution is still ours. */
  before: TimelineEvent[];
  /** The execution's last transcript lines, written with the end (always, like any transcript line). */
  transcript?: TranscriptRow[];
}

/** `ended`, `continued` (follow-ups were waiting: the run is queued for its next execution), or `lost` (no longer ours). */
export type FinishResult = 'ended' | 'continued' | 'lost';

export interface FollowupInput {
  seq: string;
  message: string;
}
