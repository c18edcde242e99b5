import { countRefusal, RunNetwork } from '../../network/index.js';
import { endSpan, inSpan, type Span, startSpan, withSpan } from '../../platform/tracing.js';
import type { Outcome, TranscriptRow } from '../../runs/index.js';
import type { GitHubSession } from '../github/session.js';
import type { BuiltInSetup } from '../model/built-in-setup.js';
import type { FollowupDelivery } from './followups.js';
import { awaitAgent, beginAgent, spawnAgent } from './phases/agent.js';
import { connectEnvironment, setUpEnvironment } from './phases/environment.js';
import { prepare } from './phases/prepare.js';
import { publish } from './phases/publish.js';
import { type Ready, ready } from './phases/ready.js';
import { openSandbox } from './phases/sandbox.js';
import { errorEnding, settle } from './phases/settle.js';
import { take } from './phases/take.js';
import { type Ended, ends, type RetainedWorkspace, type RunScope, stopReason } from './phases/types.js';

/**
 * One execution of a claimed run, phase after phase: take -> prepare -> sandbox -> environment -> ready -> agent ->
 * publish, then settle, whatever happened. Each phase returns what the next needs or how the execution ends; a phase
 * that throws ends it too (errorEnding). Resolves with the outcome it recorded, if any.
 */
export async function runExecution(
  scope: RunScope,
  followups: FollowupDelivery,
  /** Takes a workspace kept after a failed setup; without it (a worker), no workspace is kept. */
  onRetained: ((retained: RetainedWorkspace) => void) | undefined,
  span: Span | undefined,
): Promise<Outcome | null> {
  const { context, run, record, signal } = scope;
  if (ends(await take(scope))) return null;
  // What the cleanup and the end need, whichever phase the execution ended in.
  let workspace = undefined as string | undefined;
  let github = null as GitHubSession | null;
  let retained = undefined as RetainedWorkspace | undefined;
  let outcome = null as Outcome | null;
  let transcriptTail: TranscriptRow[] = [];
  let unavailableBeforeAgent = false;
  let agentMayHaveRun = false as boolean;
  let agentStarted = false as boolean;
  // The environment's network, phase by phase (an allow list through the egress proxy), and what it refused.
  let network = undefined as RunNetwork | undefined;
  // Workspace, files, model, clones and setup commands: the setup span, ended when the agent is about to start.
  const setup = startSpan('setup');

  // Before the spawn, the agent did nothing; from it on, it may have (see Settling).
  const agent = async (inWorkspace: string, readied: Ready, builtIn: BuiltInSetup | undefined) => {
    const begun = await beginAgent(scope, inWorkspace, readied.harness, builtIn, github, readied.guestGitHome);
    if (ends(begun)) return begun;
    agentStarted = begun.continue.recordedFirst !== undefined;
    agentMayHaveRun = true;
    const spawned = await spawnAgent(scope, begun.continue, followups);
    if (ends(spawned)) return spawned;
    agentStarted = true;
    return awaitAgent(scope, begun.continue, spawned.continue, followups);
  };

  const phases = async (): Promise<Ended> => {
    const inWorkspace = await context.workspaces.create(run.id, run.execution_id);
    workspace = inWorkspace;
    const prepared = await prepare(scope, (name) => span?.setAttribute('hangar.harness', name));
    if (ends(prepared)) return prepared;
    const { harnessName, harness, builtIn, environment } = prepared.continue;
    network = new RunNetwork({
      run: run.id,
      workspace: inWorkspace,
      network: environment?.network,
      // The operator's ceilings: HANGAR_SETUP_NETWORK, and the harness's own (a built-in CLI's is always on).
      ceilings: { setup: context.workspaces.setupNetwork, agent: harness?.network !== false },
      proxy: context.egress,
      report: (type, payload) => record.event(type, payload),
      counted: (refusal) => countRefusal(run.environment_id, refusal.phase, refusal.reason),
    });
    await network.enter('setup');
    const sandbox = await openSandbox(scope, inWorkspace, environment, harness, network);
    if (ends(sandbox)) return sandbox;
    const environmentId = run.environment_id;
    if (environmentId !== null) {
      const connected = await withSpan(setup, () => connectEnvironment(scope, environmentId, environment));
      if (ends(connected)) return connected;
      github = connected.continue.github;
      const setUp = await withSpan(setup, () =>
        setUpEnvironment(
          scope,
          inWorkspace,
          environmentId,
          connected.continue.environment,
          github,
          harnessName,
          sandbox.continue,
        ),
      );
      if (ends(setUp)) return setUp;
    }
    const readied = await ready(scope, inWorkspace, harnessName, harness, environment);
    if (ends(readied)) return readied;
    endSpan(setup);
    await network.enter('agent');
    const ran = await inSpan('agent', { 'hangar.harness': readied.continue.harness.name }, () =>
      agent(inWorkspace, readied.continue, builtIn),
    );
    if (ends(ran)) return ran;
    // Kept whatever the publishing does: a publish that throws still ends with the agent's last lines.
    transcriptTail = ran.continue.transcriptTail;
    outcome = ran.continue.outcome;
    return { outcome: await publish(scope, github, inWorkspace, outcome, network.refusals()) };
  };

  try {
    const ended = await phases();
    outcome = ended.outcome;
    if (ended.transcriptTail) transcriptTail = ended.transcriptTail;
    if (ended.retained) {
      retained = ended.retained;
      onRetained?.(ended.retained);
    }
  } catch (error) {
    endSpan(setup, error);
    const failure = errorEnding(scope, error, agentMayHaveRun);
    // Stopped meanwhile: the outcome so far stays (the end is then the stop's).
    outcome = failure.outcome ?? outcome;
    unavailableBeforeAgent = failure.unavailableBeforeAgent;
  } finally {
    // The execution's tokens end with it (the workspace and its credential file go next).
    await github?.close().catch(() => undefined);
    // Its lease ends, and the account of what it refused goes on the timeline before the end.
    await network
      ?.close()
      .catch((error) => context.log.warn({ err: error, runId: run.id }, 'closing the run network failed'));
    if (workspace !== undefined && !retained) await context.workspaces.remove(workspace).catch(() => undefined);
    const reason = stopReason(signal);
    const shutdown = retained ? [] : [{ type: 'vm_shutdown', ...(reason ? { payload: { reason } } : {}) }];
    endSpan(setup);
    const settling = { outcome, unavailableBeforeAgent, agentMayHaveRun, agentStarted, transcriptTail };
    await inSpan('end', {}, () => settle(scope, settling, record.withUnwritten(shutdown))).catch((error) =>
      context.log.error({ err: error, runId: run.id }, 'could not record how the run ended'),
    );
  }
  return outcome;
}
