import { randomUUID } from 'node:crypto';
import type { EnvironmentConfig } from '../../../environments/index.js';
import { GitHubRefusal } from '../../../github/index.js';
import type { Outcome } from '../../../runs/index.js';
import { GitHubSession } from '../../github/session.js';
import type { PreparedEnvironment } from '../../warm/warm-start.js';
import type { CloneAccess } from '../../workspace/workspace.js';
import { guestRunOf, withholdsTeamSecrets } from '../guest-run.js';
import { failed } from '../outcomes.js';
import type { ExecutionSandbox } from './sandbox.js';
import { NOTHING, type Phase, type RunScope } from './types.js';

type Report = (type: string, payload: Record<string, unknown>) => Promise<void>;

/**
 * The start of an environment's setup: the environment still exists, and the run's GitHub session (its
 * repositories' tokens) is open, unless the environment is another team's that may not have this team's secrets.
 */
export async function connectEnvironment(
  scope: RunScope,
  environmentId: string,
  environment: EnvironmentConfig | undefined,
): Promise<Phase<{ environment: EnvironmentConfig; github: GitHubSession | null }>> {
  const { context, run, record } = scope;
  if (!environment) return { outcome: failed({ kind: 'environment_missing', environmentId }) };
  await record.event('environment_setup_started', {
    environment_id: environmentId,
    repos: environment.github_repos.map(({ owner, repo }) => `${owner}/${repo}`),
    setup_commands: environment.setup_commands.length,
  });
  try {
    // The team's GitHub tokens are its secrets too: not in another team's environment without consent (its
    // repositories are then cloned through the server's git base URL only).
    const withholdGitHub = withholdsTeamSecrets(environment);
    if (withholdGitHub && context.github && environment.github_repos.length > 0)
      await record.event('github_token_withheld', {
        reason: `environment ${environmentId} is another team's, and this team's admins have not allowed its secrets there`,
      });
    const github = withholdGitHub ? null : await GitHubSession.open(context, run, environment, scope.redactor);
    return { continue: { environment, github } };
  } catch (error) {
    if (!(error instanceof GitHubRefusal)) throw error;
    await record.event('github_token_failed', { reason: error.message });
    return { outcome: failed({ kind: 'github_token', environmentId, reason: error.message }) };
  }
}

/**
 * Clones the environment's repositories and runs its setup commands: warm from a setup snapshot where there may be
 * one, cold otherwise. A failed setup ends the run; its workspace is kept for a debug window when the environment
 * asks for one (the run has then ended, see RetainedWorkspace).
 */
export async function setUpEnvironment(
  scope: RunScope,
  workspace: string,
  environmentId: string,
  environment: EnvironmentConfig,
  github: GitHubSession | null,
  harness: string | undefined,
  sandbox: ExecutionSandbox | undefined,
): Promise<Phase<null>> {
  const { context, run, record, signal } = scope;
  const report: Report = (type, payload) => record.event(type, payload);
  const access = github?.cloneAccess();
  // Why the container could not be opened, when it could not.
  let refused: Outcome | null = null;
  const open = async (snapshotImage?: string) => {
    const opened = await sandbox!.open(snapshotImage);
    if (!opened.ok) refused = opened.outcome;
    return opened.ok;
  };
  // Repositories read with the run's own GitHub token are cloned for this execution alone and never snapshotted:
  // the mirror and the snapshots are shared by every run of the environment.
  const warm = context.warm && !access?.tokens.size;
  if (sandbox && !warm && !(await open())) return { outcome: refused };
  const prepared: PreparedEnvironment | null = warm
    ? await context.warm!.prepare({
        workspace,
        runId: run.id,
        executionId: run.execution_id,
        environmentUid: environmentId,
        teamUid: run.team_uid,
        environment,
        mayTakeSnapshot: run.attachment_count === 0,
        report,
        abort: signal,
        ...(sandbox ? { sandbox: { open, close: () => sandbox.close(), retire: () => sandbox.retire() } } : {}),
      })
    : await setUpCold(scope, workspace, environment, report, access);
  if (!prepared) return { outcome: refused };
  const { result } = prepared;
  if (signal.aborted) return NOTHING;
  await context.ledger.recordSetupResult(environmentId, !result.ok, run.id, run.execution_id);
  if (result.ok) {
    // Which path it took and where the time went (issue 28): the pull (containers), fetch, clone or restore,
    // update, setup, snapshot; the agent's own start is on agent_started.
    const pullMs = sandbox?.pullMs;
    await record.event('environment_setup_done', {
      environment_id: environmentId,
      path: prepared.path,
      steps_ms: { ...(pullMs !== undefined ? { pull: pullMs } : {}), ...stepsOf(prepared.steps) },
      ...(prepared.snapshotKey ? { snapshot_key: prepared.snapshotKey } : {}),
    });
    return { continue: null };
  }
  // No debug window in another team's environment: its debug agent would work in the owner's setup as it was left,
  // git settings included (clone-git-config.ts cleans them only before the agent of a setup that passed).
  const minutes =
    scope.retainsWorkspaces && !guestRunOf(environment) ? environment.failure_session_retention_minutes : null;
  const until = minutes ? new Date(Date.now() + minutes * 60_000) : undefined;
  const conversationId = run.conversation_id ?? randomUUID();
  const failure = { kind: 'setup_failed', environmentId, message: result.message } as const;
  if (!until) return { outcome: failed(failure) };
  // The workspace stays, so it is not shut down: the run ends now, and the debug window starts.
  const debug = { owner: context.engineId, workspace, until };
  const ended = await record.finish(failed({ ...failure, debug }), [], []);
  if (ended !== 'ended') return NOTHING;
  return {
    outcome: null,
    retained: {
      runId: run.id,
      executionId: run.execution_id,
      teamUid: run.team_uid,
      workspace,
      until,
      retentionMinutes: minutes!,
      harness,
      prompt: run.prompt,
      failure: result.message,
      agentConfig: run.agent_config,
      conversationId,
    },
  };
}

/** Clone and setup without snapshots (a worker, snapshots turned off, or GitHub-token repositories), timed the same way. */
async function setUpCold(
  scope: RunScope,
  workspace: string,
  environment: EnvironmentConfig,
  report: Report,
  access: CloneAccess | undefined,
): Promise<PreparedEnvironment> {
  const started = performance.now();
  const result = await scope.context.workspaces.setUp(workspace, environment, report, scope.signal, access);
  return { result, path: 'cold', steps: { setup_ms: Math.round(performance.now() - started) } };
}

/** `fetch_ms` and the like as `{ fetch: ... }`: the timeline's step durations. */
function stepsOf(steps: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(steps).map(([name, ms]) => [name.replace(/_ms$/, ''), ms]));
}
