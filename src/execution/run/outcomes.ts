import { type Outcome, unreachable } from '../../runs/index.js';
import type { HarnessStartError } from '../harnesses/harness.js';
import type { FinalEvent, HarnessRunResult } from './harness-run.js';
import { failureReason } from './output-tail.js';

/**
 * Every way an execution can fail, with what the run's owner is told. A new kind must be given its state and
 * `error_code` in RULES below, or the build fails.
 */
export type Failure =
  /** The harness, its model or an MCP server could not be started (the error names its code). */
  | { kind: 'start_refused'; error: HarnessStartError }
  /** A run in another team's environment that would take this team's secrets without its admins' consent. */
  | { kind: 'secrets_withheld'; message: string }
  | { kind: 'harness_not_configured'; harness: string }
  /** The git settings another team's setup wrote could not be taken out of the agent's way. */
  | { kind: 'guest_git_config'; message: string }
  /** The run's own setup put something where the server writes its files: refused, never followed. */
  | { kind: 'workspace_refused'; message: string }
  | { kind: 'image_refused'; problem: string }
  | { kind: 'registry_credentials'; message: string }
  | { kind: 'sandbox_not_opened'; message: string }
  | { kind: 'environment_missing'; environmentId: string }
  | { kind: 'github_token'; environmentId: string; reason: string }
  /** The environment's setup failed; with `debug`, its workspace is kept for a debug window until then. */
  | {
      kind: 'setup_failed';
      environmentId: string;
      message: string;
      debug?: { owner: string; workspace: string; until: Date };
    }
  | { kind: 'spend_cap'; cap: number; spent: number; usage: Record<string, number> | null }
  /** The database went away after the agent may have started: nothing says what it did. */
  | { kind: 'database_unavailable' }
  | { kind: 'internal' }
  | { kind: 'shutdown' }
  /** The harness went past a limit of its sandbox (memory, processes); spend and time are budget_exceeded. */
  | { kind: 'resource_limit'; harness: string; limit: string; ended: HarnessEnd }
  | { kind: 'time_limit'; harness: string; ended: HarnessEnd }
  /** The harness exited non-zero without a final event: its own failure, which names no code of Hangar's. */
  | { kind: 'harness_exit'; message: string; ended: HarnessEnd };

export type FailureKind = Failure['kind'];

/** What a harness's end adds to its outcome: its usage and the end event's payload. */
interface HarnessEnd {
  usage: Record<string, number> | null;
  eventPayload: Record<string, unknown>;
}

interface Rule<F> {
  /** ERROR may be retried (retryable: true); FAILED is the run's own and is not. */
  state: 'FAILED' | 'ERROR';
  /** null: the failure is the harness's own and the status names no code (nor whether to retry). */
  error_code: string | null | ((failure: F) => string);
  message: (failure: F) => string;
}

const RULES: { [K in FailureKind]: Rule<Extract<Failure, { kind: K }>> } = {
  start_refused: { state: 'FAILED', error_code: (f) => f.error.errorCode, message: (f) => f.error.message },
  secrets_withheld: { state: 'FAILED', error_code: 'not_authorized', message: (f) => f.message },
  harness_not_configured: {
    state: 'FAILED',
    error_code: 'integration_not_configured',
    message: (f) => `The harness "${f.harness}" is not configured on this server`,
  },
  guest_git_config: { state: 'FAILED', error_code: 'environment_setup_failed', message: (f) => f.message },
  workspace_refused: {
    state: 'FAILED',
    error_code: 'environment_setup_failed',
    message: (f) => `Hangar could not prepare the workspace: ${f.message}`,
  },
  image_refused: {
    state: 'FAILED',
    error_code: 'environment_setup_failed',
    message: (f) => `The environment's docker_image ${f.problem}`,
  },
  registry_credentials: { state: 'FAILED', error_code: 'environment_setup_failed', message: (f) => f.message },
  sandbox_not_opened: { state: 'FAILED', error_code: 'environment_setup_failed', message: (f) => f.message },
  environment_missing: {
    state: 'FAILED',
    error_code: 'environment_setup_failed',
    message: (f) => `Environment ${f.environmentId} no longer exists or this team cannot reach it`,
  },
  github_token: {
    state: 'FAILED',
    error_code: 'environment_setup_failed',
    message: (f) =>
      `Environment setup failed: Hangar could not get a GitHub token for the run's repositories: ${f.reason}`,
  },
  setup_failed: { state: 'FAILED', error_code: 'environment_setup_failed', message: (f) => f.message },
  spend_cap: {
    state: 'FAILED',
    error_code: 'budget_exceeded',
    message: (f) =>
      `The run was stopped at its spend cap of ${f.cap} USD (config.max_cost_usd): it had spent ${f.spent.toFixed(4)} USD`,
  },
  database_unavailable: {
    state: 'ERROR',
    error_code: 'resource_unavailable',
    message: () => 'The database was unavailable while the run was in progress; the run may be retried',
  },
  internal: { state: 'ERROR', error_code: 'internal_error', message: () => 'Hangar could not execute the run' },
  shutdown: {
    state: 'ERROR',
    error_code: 'resource_unavailable',
    message: () => 'The server shut down while the run was in progress; the run may be retried',
  },
  resource_limit: {
    state: 'FAILED',
    error_code: 'resource_limit_exceeded',
    message: (f) => `The harness ${f.harness} ${f.limit} and was stopped`,
  },
  time_limit: {
    state: 'FAILED',
    error_code: 'budget_exceeded',
    message: (f) => `The harness ${f.harness} ran past its time limit and was stopped`,
  },
  harness_exit: { state: 'FAILED', error_code: null, message: (f) => f.message },
};

/** The outcome of a failure: its state, message and `error_code` (RULES), with what the kind carries. */
export function failed(failure: Failure): Outcome {
  const rule = RULES[failure.kind] as Rule<Failure>;
  const code = typeof rule.error_code === 'function' ? rule.error_code(failure) : rule.error_code;
  const statusMessage: Record<string, unknown> = { message: rule.message(failure) };
  if (code !== null) Object.assign(statusMessage, { error_code: code, retryable: rule.state === 'ERROR' });
  const outcome: Outcome = { state: rule.state, statusMessage, usage: null };
  switch (failure.kind) {
    case 'spend_cap':
      outcome.usage = failure.usage;
      break;
    case 'resource_limit':
    case 'time_limit':
    case 'harness_exit':
      outcome.usage = failure.ended.usage;
      outcome.eventPayload = failure.ended.eventPayload;
      break;
    case 'github_token':
      outcome.eventPayload = { environment_id: failure.environmentId };
      break;
    case 'setup_failed': {
      outcome.eventPayload = { environment_id: failure.environmentId };
      const { debug } = failure;
      if (debug) {
        const until = debug.until.toISOString();
        statusMessage.session_debug_until = until;
        outcome.debugSession = { owner: debug.owner, workspace: debug.workspace, until };
      }
      break;
    }
  }
  return outcome;
}

/**
 * How an execution ends, from what the harness said last and how its process exited. A final event wins (the
 * harness knows best); without one, exit 0 is success and anything else a failure naming the exit code.
 */
export function harnessOutcome(result: HarnessRunResult, harness: string): Outcome {
  const { exit, final, usage, diagnostics } = result;
  const payload = {
    harness,
    exit_code: exit.code,
    ...(exit.signal ? { signal: exit.signal } : {}),
    ...(exit.outputTruncated ? { output_truncated: true } : {}),
    ...(diagnostics.length > 0 && exit.code !== 0 ? { stderr_tail: diagnostics.join('\n') } : {}),
  };
  if (final) return { ...finalOutcome(final), usage, eventPayload: payload };
  if (exit.limitExceeded) {
    const ended = { usage, eventPayload: { ...payload, limit_exceeded: exit.limitExceeded } };
    return failed({ kind: 'resource_limit', harness, limit: exit.limitExceeded, ended });
  }
  if (exit.timedOut) {
    return failed({ kind: 'time_limit', harness, ended: { usage, eventPayload: { ...payload, timed_out: true } } });
  }
  if (exit.code === 0) return { state: 'SUCCEEDED', statusMessage: null, usage, eventPayload: payload };
  const how = exit.code === null ? `was killed by ${exit.signal ?? 'a signal'}` : `exited with code ${exit.code}`;
  // The error itself (`Error: Cannot find module ...`), not node's closing `Node.js v20` line.
  const reason = failureReason(diagnostics);
  const message = `The harness ${harness} ${how}${reason ? `: ${reason.slice(0, 500)}` : ''}`;
  return failed({ kind: 'harness_exit', message, ended: { usage, eventPayload: payload } });
}

/** The run state each final event of the harness protocol ends in: a new kind of final event must be mapped here. */
function finalOutcome(final: FinalEvent): Pick<Outcome, 'state' | 'statusMessage'> {
  switch (final.type) {
    case 'done':
      return { state: 'SUCCEEDED', statusMessage: final.summary ? { message: final.summary } : null };
    case 'ask_user':
      return { state: 'BLOCKED', statusMessage: { message: final.question } };
    case 'failed':
      return {
        state: 'FAILED',
        statusMessage: { message: final.message, ...(final.error_code ? { error_code: final.error_code } : {}) },
      };
    default:
      return unreachable(final);
  }
}

/**
 * A SUCCEEDED run whose work could not all be published: it stays SUCCEEDED, and its message says what failed
 * after the agent's summary.
 */
export function publishFailed(outcome: Outcome, summary: string | undefined, failures: string[]): Outcome {
  const note = `The agent's work is done and kept in its transcript, but Hangar could not publish it to GitHub: ${failures.join('; ')}`;
  return { ...outcome, statusMessage: { message: summary ? `${summary}\n\n${note}` : note } };
}
