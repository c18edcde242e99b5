import { rfc3339 as iso } from '../platform/time.js';
import { isTerminal } from './lifecycle/states.js';
import { requestUsage, type ServedModelLookup } from './request-usage.js';
import type { RunItem } from './schemas.js';
import { isRunTypeCancellable } from './state.js';
import type { Profile, RunRow } from './store.js';

/** The error codes of Hangar's own failures (a run ends ERROR on them); every other code is the caller's to fix. */
const PLATFORM_ERROR_CODES = new Set(['authentication_required', 'resource_unavailable', 'internal_error']);

/** What renderRun needs beyond the row: the base of dashboard links and the prices of the model a run used. */
export interface RenderContext {
  publicUrl: string;
  servedModel?: ServedModelLookup;
  now?: number;
}

/** A debug agent may start in the kept workspace of this failed setup: its window is open (followups.ts). */
function debugWindowOpen(row: RunRow, now: number): boolean {
  const status = row.status_message as { error_code?: unknown } | null;
  return (
    row.state === 'FAILED' &&
    status?.error_code === 'environment_setup_failed' &&
    row.debug_session !== null &&
    Date.parse(row.debug_session.until) > now
  );
}

function ownModelKey(config: Record<string, unknown>): boolean {
  const secrets = config.harness_auth_secrets as Record<string, unknown> | undefined;
  return Boolean(secrets && Object.values(secrets).some((name) => typeof name === 'string' && name !== ''));
}

/** ISO 8601 duration (for example PT2M30S) with whole seconds. */
export function isoDuration(milliseconds: number): string {
  let seconds = Math.max(0, Math.round(milliseconds / 1000));
  const hours = Math.floor(seconds / 3600);
  seconds -= hours * 3600;
  const minutes = Math.floor(seconds / 60);
  seconds -= minutes * 60;
  return `PT${hours ? `${hours}H` : ''}${minutes ? `${minutes}M` : ''}${seconds || (!hours && !minutes) ? `${seconds}S` : ''}`;
}

/** ISO 8601 duration to the millisecond (PT0.035S), whole seconds from a minute on: a queue wait is often short. */
export function preciseDuration(milliseconds: number): string {
  const ms = Math.max(0, Math.round(milliseconds));
  return ms < 60_000 ? `PT${ms / 1000}S` : isoDuration(ms);
}

/**
 * A run's run time in seconds (docs/lifecycle.md): the agent time of its executions that ended (agent_seconds, kept
 * by the lifecycle's hangar_run_times), plus the current execution's since its agent started. Undefined until an
 * agent started: waiting and setting up are not run time, and neither is the time between an end and a follow-up.
 */
export function runSeconds(
  run: { agent_seconds: number | null; agent_started_at: string | null },
  now: number,
): number | undefined {
  if (run.agent_started_at === null) return run.agent_seconds ?? undefined;
  return (run.agent_seconds ?? 0) + Math.max(0, (now - Date.parse(run.agent_started_at)) / 1000);
}

function profile(type: string, uid: string, details: Profile | null): RunItem['creator'] {
  return {
    type,
    uid,
    ...(details?.display_name ? { display_name: details.display_name } : {}),
    ...(details?.email ? { email: details.email } : {}),
  };
}

/**
 * The run's page in the web dashboard (served at the root of the public URL, `/runs/:runId`): what the interface
 * calls its session link. Every run has one, whatever its state.
 */
export function sessionLink(publicUrl: string, runId: string): string {
  return `${publicUrl}/runs/${encodeURIComponent(runId)}`;
}

/** `publicUrl` is HANGAR_PUBLIC_URL (or the address the server listens on), without a trailing slash. */
export function renderRun(row: RunRow, context: RenderContext | string): RunItem {
  const { publicUrl, servedModel, now = Date.now() } = typeof context === 'string' ? { publicUrl: context } : context;
  const debugAvailable = debugWindowOpen(row, now);
  const item: RunItem = {
    run_id: row.id,
    task_id: row.id,
    title: row.title,
    state: row.state,
    prompt: row.prompt,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
    source: row.source,
    execution_location: row.execution_location,
    creator: profile(row.creator_type, row.creator_uid, row.creator_profile),
    executor: profile(row.executor_type, row.executor_uid, row.executor_profile),
    agent_config: row.agent_config,
    metadata: row.metadata,
    is_sandbox_running: row.sandbox_running,
    is_run_type_cancellable: isRunTypeCancellable(row),
    artifacts: row.artifacts.map((artifact) => ({ ...artifact, created_at: iso(artifact.created_at) })),
    scores: row.scores.map((score) => ({ ...score, created_at: iso(score.created_at) })),
    scope: { type: row.scope_type, uid: row.scope_uid },
    session_link: sessionLink(publicUrl, row.id),
    finished_at: isTerminal(row.state) && row.ended_at ? iso(row.ended_at) : null,
    debug_agent_available: debugAvailable,
    root_run_id: row.root_run_id ?? row.parent_run_id ?? row.id,
  };
  if (row.trigger_url)
    item.trigger_url = row.trigger_url.startsWith('/') ? publicUrl + row.trigger_url : row.trigger_url;
  if (row.automation_id) item.automation_id = row.automation_id;
  if (row.factory_uid) item.factory_uid = row.factory_uid;
  if (row.started_at) item.started_at = iso(row.started_at);
  const seconds = runSeconds(row, Date.now());
  if (seconds !== undefined) item.run_time = isoDuration(seconds * 1000);
  if (row.claimed_at) item.queue_wait = preciseDuration(Date.parse(row.claimed_at) - Date.parse(row.created_at));
  if (row.status_message) {
    const status = { ...row.status_message } as NonNullable<RunItem['status_message']>;
    // A debug turn running in the kept workspace holds the window open (its deadline moves when the turn ends).
    if (debugAvailable) status.debug_agent_active = row.sandbox_running;
    item.status_message = status;
    if ((row.state === 'FAILED' || row.state === 'ERROR') && typeof status.error_code === 'string')
      item.error_category = PLATFORM_ERROR_CODES.has(status.error_code) || row.state === 'ERROR' ? 'platform' : 'user';
  }
  if (row.schedule) item.schedule = row.schedule;
  if (row.session_id) item.session_id = row.session_id;
  if (row.request_usage) {
    const harness = (row.agent_config.harness as { type?: unknown } | undefined)?.type;
    const served = servedModel?.(row.model_id, typeof harness === 'string' ? harness : null);
    item.request_usage = requestUsage(row.request_usage, served, ownModelKey(row.agent_config));
  }
  if (row.conversation_id) item.conversation_id = row.conversation_id;
  if (row.parent_run_id) item.parent_run_id = row.parent_run_id;
  if (row.agent_skill) item.agent_skill = row.agent_skill;
  return item;
}

export function renderEvent(event: {
  event_uuid: string;
  run_id: string;
  execution_id: string | null;
  event_type: string;
  occurred_at: Date;
  payload: Record<string, unknown> | null;
}) {
  return {
    event_uuid: event.event_uuid,
    run_id: event.run_id,
    ...(event.execution_id ? { execution_id: event.execution_id } : {}),
    event_type: event.event_type,
    occurred_at: iso(event.occurred_at),
    ...(event.payload ? { payload: event.payload } : {}),
  };
}
