import { randomUUID } from 'node:crypto';
import type { FollowupInput, Outcome, TransitionResult } from '../../../runs/index.js';
import type { GitHubSession } from '../../github/session.js';
import type { Harness, HarnessSession, TranscriptLine } from '../../harnesses/harness.js';
import type { BuiltInSetup } from '../../model/built-in-setup.js';
import { activateModelMeter } from '../../model/meter.js';
import type { FollowupDelivery } from '../followups.js';
import { withGuestGit } from '../guest-run.js';
import { type HarnessRunResult, startHarnessRun } from '../harness-run.js';
import { failed, harnessOutcome } from '../outcomes.js';
import { AgentSpend, costIn, spendCap } from '../spend.js';
import { NOTHING, type Phase, type RunScope } from './types.js';

/** What the agent is started with, read before the intent to start it. */
export interface AgentStart {
  harness: Harness;
  builtIn: BuiltInSetup | undefined;
  workspace: string;
  conversationId: string;
  history: TranscriptLine[];
  env: Record<string, string>;
  spend: AgentSpend;
  /** The follow-ups waiting, read with the intent (a ledger that records the start before the spawn: undefined). */
  waiting: FollowupInput[] | undefined;
  /** The start, recorded before the spawn by a ledger that cannot read the follow-ups without taking them. */
  recordedFirst: TransitionResult | undefined;
  recordStart: () => Promise<TransitionResult>;
}

/**
 * Everything before the agent's harness is spawned. The agent's start is recorded once its harness process exists,
 * not before, and the intent to start it just before the spawn: an engine that dies before the intent leaves the
 * run CLAIMED, and its takeback puts it back in the queue, as nothing of its agent ran; one that dies between the
 * intent and the record may have left a harness that ran (it wrote its first line before the record), so the
 * takeback ends the run ERROR, retryable, instead. So what the harness starts with is read before either (the
 * conversation so far, its GitHub credentials), and the follow-ups waiting, which the start takes, with the intent
 * (later ones are delivered like any follow-up). A ledger that cannot read the follow-ups without taking them (a
 * worker's link) records the start just before the spawn instead.
 */
export async function beginAgent(
  scope: RunScope,
  workspace: string,
  harness: Harness,
  builtIn: BuiltInSetup | undefined,
  github: GitHubSession | null,
  guestGitHome: string | undefined,
): Promise<Phase<AgentStart>> {
  const { context, run, record, signal } = scope;
  const { ledger } = context;
  const conversationId = run.conversation_id ?? randomUUID();
  const modelId = builtIn?.model.id;
  const agentBegan = performance.now();
  // A new conversation has no earlier executions to replay.
  const continuing = run.conversation_id !== null || run.execution_id > 1;
  const history = continuing
    ? await ledger.history(run.conversation_id ?? conversationId, run.id, run.execution_id)
    : [];
  // A continued run's cap is on its total: what its earlier executions spent counts (the run's request_usage is
  // their sum plus this execution's, see hangar_usage_total).
  const spentBefore = run.execution_id > 1 ? costIn(await ledger.usageBefore(run.id)) : 0;
  if (signal.aborted) return NOTHING;
  const cap = spendCap(run.agent_config, context.defaultMaxCostUsd);
  const spend = new AgentSpend(context, run, modelId, cap, spentBefore);
  const env = withGuestGit(
    { ...ledger.variables(run.id, run.execution_id), ...(github ? await github.prepareHarness(workspace) : {}) },
    guestGitHome,
  );
  if (signal.aborted) return NOTHING;
  // The intent to start, with the follow-ups the harness starts with, in one statement (batched across starts).
  const waiting = ledger.beginAgentStart ? await ledger.beginAgentStart(run.id, run.execution_id) : undefined;
  const recordStart = () =>
    record.transition(
      'CLAIMED',
      'INPROGRESS',
      [
        {
          type: 'agent_started',
          payload: {
            harness: harness.name,
            ...(modelId ? { model_id: modelId } : {}),
            // From the end of setup to the harness process (its files, history, spawn): the last step's time.
            start_ms: Math.round(performance.now() - agentBegan),
          },
        },
      ],
      {
        started: true,
        conversationId,
        harness: harness.name,
        ...(modelId ? { modelId } : {}),
        takeInputs: true,
        ...(waiting ? { takeInputsUpTo: waiting.at(-1)?.seq ?? '0' } : {}),
        // Counted where the start is recorded (the server, also for a worker's execution).
        setupSeconds: (performance.now() - record.began) / 1000,
      },
    );
  const recordedFirst = waiting === undefined ? await recordStart() : undefined;
  if (recordedFirst && !recordedFirst.moved) return NOTHING;
  const start = { harness, builtIn, workspace, conversationId, history, env, spend, waiting, recordStart };
  return { continue: { ...start, recordedFirst } };
}

/** The harness process and what it ends with; `release` takes its model meter from those the proxy charges. */
export interface Spawned {
  session: HarnessSession;
  result: Promise<HarnessRunResult>;
  release: () => void;
}

/**
 * Spawns the harness and records its start (unless the ledger did before). Stopped, cancelled or taken back while
 * the harness started, or the start could not be written: it never counted as started, and it stops now (a
 * shutdown then puts the run back in the queue).
 */
export async function spawnAgent(
  scope: RunScope,
  start: AgentStart,
  followups: FollowupDelivery,
): Promise<Phase<Spawned>> {
  const { context, run, signal } = scope;
  const { harness, recordedFirst, spend } = start;
  let startRecorded!: (recorded: boolean) => void;
  const recorded = new Promise<boolean>((resolve) => (startRecorded = resolve));
  if (recordedFirst) startRecorded(true);
  const basePrompt = run.agent_config.base_prompt;
  // Only the harness makes model calls: the proxy charges them to this meter from here on.
  const release = activateModelMeter(spend.meter);
  const { session, result } = await startHarnessRun(
    context,
    harness,
    {
      runId: run.id,
      executionId: run.execution_id,
      kind: 'agent',
      conversationId: run.conversation_id ?? start.conversationId,
      prompt: run.prompt,
      basePrompt: typeof basePrompt === 'string' ? basePrompt : null,
      followups: start.waiting?.map((input) => input.message) ?? recordedFirst!.inputs,
      history: start.history,
      workspace: start.workspace,
      workspaceOwner: context.workspaces.owner,
      env: start.env,
      agentConfig: run.agent_config,
      ...start.builtIn,
    },
    run.team_uid,
    true,
    recorded,
    spend.onUsage,
  ).catch((error) => {
    startRecorded(false);
    release();
    throw error;
  });
  followups.spawned(session);
  if (!recordedFirst) {
    const started = signal.aborted ? { moved: false } : await start.recordStart().catch((error: unknown) => error);
    const moved = !(started instanceof Error) && (started as { moved: boolean }).moved;
    startRecorded(moved);
    if (!moved) {
      await session.cancel();
      await result.finally(release);
      if (started instanceof Error) throw started;
      return NOTHING;
    }
  }
  return { continue: { session, result, release } };
}

/**
 * The agent at work, its start recorded: follow-ups go to it, a stop or the spend cap stops it, and its end
 * decides the outcome (nothing when it was stopped: the run's state is then someone else's to set).
 */
export async function awaitAgent(
  { signal }: RunScope,
  start: AgentStart,
  spawned: Spawned,
  followups: FollowupDelivery,
): Promise<Phase<{ outcome: Outcome; transcriptTail: HarnessRunResult['transcriptTail'] }>> {
  const { session, result, release } = spawned;
  const { spend } = start;
  spend.watch(session);
  followups.attach(session);
  if (signal.aborted || spend.overBudget) void session.cancel();
  if (!signal.aborted) signal.addEventListener('abort', () => void session.cancel(), { once: true });
  // Follow-ups that arrived after the harness was given its own: sent to it, or kept for the next execution.
  await followups.deliver();
  const finished = await result.finally(release);
  followups.harnessExited();
  await followups.drained();
  const { transcriptTail } = finished;
  if (signal.aborted) return { outcome: null, transcriptTail };
  const usage = spend.final(finished.usage);
  const outcome = spend.overBudget
    ? failed({ kind: 'spend_cap', ...spend.overBudget, usage })
    : { ...harnessOutcome(finished, start.harness.name), usage };
  return { continue: { outcome, transcriptTail } };
}
