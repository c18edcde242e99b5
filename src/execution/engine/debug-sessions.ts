import { activateRedactor } from '../../platform/redaction/active.js';
import { type HarnessSession, HarnessStartError } from '../harnesses/harness.js';
import { type BuiltInSetup, builtInSetup } from '../model/built-in-setup.js';
import { activateModelMeter, ModelMeter } from '../model/meter.js';
import { addBuiltInSecrets, operatorRedactor, redactedContext } from '../redaction/index.js';
import type { EngineContext } from '../run/context.js';
import type { RetainedWorkspace } from '../run/executor.js';
import { startHarnessRun } from '../run/harness-run.js';

interface DebugSession {
  retained: RetainedWorkspace;
  timer: NodeJS.Timeout;
  agent: HarnessSession | undefined;
  /** Serializes follow-ups to this session. */
  queue: Promise<void>;
}

/**
 * Workspaces kept open after a failed environment setup. A follow-up within the idle window starts (or talks to)
 * a debug agent in the kept workspace; the run stays FAILED with its message and error code. Each debug turn
 * moves the end of the window; when it passes, the workspace is removed.
 */
export class DebugSessions {
  private readonly sessions = new Map<string, DebugSession>();

  constructor(private readonly context: EngineContext) {}

  get workspaces(): string[] {
    return [...this.sessions.values()].map((session) => session.retained.workspace);
  }

  retain(retained: RetainedWorkspace): void {
    const session: DebugSession = {
      retained,
      timer: this.expiry(retained.runId, retained.until),
      agent: undefined,
      queue: Promise.resolve(),
    };
    this.sessions.set(retained.runId, session);
  }

  /** A follow-up for the debug agent of `runId` was stored; this engine acts only if it holds the workspace. */
  followUp(runId: string): void {
    const session = this.sessions.get(runId);
    if (!session) return;
    session.queue = session.queue
      .then(() => this.deliver(session))
      .catch((error) => this.context.log.error({ err: error, runId }, 'debug follow-up failed'));
  }

  private async deliver(session: DebugSession): Promise<void> {
    if (session.agent) {
      if (!session.agent.acceptsInput) return; // taken when this agent turn ends
      for (const message of await this.takeDebugInputs(session.retained.runId)) session.agent.send(message);
      return;
    }
    const messages = await this.takeDebugInputs(session.retained.runId);
    if (messages.length === 0) return;
    await this.runAgent(session, messages);
  }

  private async runAgent(session: DebugSession, followups: string[]): Promise<void> {
    const { context } = this;
    const { retained } = session;
    const harness = retained.harness === undefined ? undefined : context.harnesses.get(retained.harness);
    if (!harness) {
      context.log.warn({ runId: retained.runId }, 'no harness to start a debug agent with');
      return;
    }
    let builtIn: BuiltInSetup | undefined;
    try {
      builtIn = await builtInSetup(
        context,
        { id: retained.runId, team_uid: retained.teamUid, agent_config: retained.agentConfig },
        harness.name,
      );
    } catch (error) {
      if (!(error instanceof HarnessStartError)) throw error;
      await context.lifecycle.event(retained.runId, retained.executionId, 'debug_agent_failed', {
        message: error.message,
        error_code: error.errorCode,
      });
      return;
    }
    clearTimeout(session.timer);
    // A debug turn is an execution of its own (its transcript and conversation step), but the run stays FAILED.
    const executionId = await context.lifecycle.startDebugTurn(retained.runId, retained.conversationId);
    if (executionId === undefined) return this.close(retained.runId);
    retained.executionId = executionId;
    await context.lifecycle.event(retained.runId, executionId, 'debug_agent_started', {
      harness: harness.name,
      workspace_retained: true,
    });
    const redactor = operatorRedactor(context);
    addBuiltInSecrets(redactor, harness.name, retained.agentConfig, builtIn);
    const deactivateRedactor = activateRedactor(retained.runId, executionId, redactor);
    // A CLI's model calls go through the proxy, which forwards only an execution's metered calls: a debug turn's
    // are held to the run's cap (its spend is not recorded on the ended run, so each turn has the cap to itself).
    let agent: HarnessSession | undefined;
    const ownCap = retained.agentConfig.max_cost_usd;
    const meter = new ModelMeter({
      runId: retained.runId,
      executionId,
      teamUid: retained.teamUid,
      cap: typeof ownCap === 'number' && ownCap > 0 ? ownCap : context.defaultMaxCostUsd,
      spentBefore: 0,
      report: () => {},
      overCap: () => void agent?.cancel(),
    });
    const deactivateMeter = activateModelMeter(meter);
    const deactivate = () => {
      deactivateRedactor();
      deactivateMeter();
    };
    const started = await startHarnessRun(
      redactedContext(context, redactor),
      harness,
      {
        runId: retained.runId,
        executionId,
        kind: 'debug',
        conversationId: retained.conversationId,
        prompt: `The environment setup of this run failed: ${retained.failure}\nThe workspace is kept as it was; investigate and help fix the setup.\n\nThe run's original prompt:\n${retained.prompt}`,
        basePrompt: null,
        followups,
        history: [],
        workspace: retained.workspace,
        workspaceOwner: context.workspaces.owner,
        env: context.ledger.variables(retained.runId, executionId),
        agentConfig: retained.agentConfig,
        ...builtIn,
      },
      retained.teamUid,
    ).catch((error: unknown) => {
      deactivate();
      throw error;
    });
    agent = started.session;
    session.agent = agent;
    const finished = await started.result.finally(deactivate);
    session.agent = undefined;
    const until = new Date(Date.now() + retained.retentionMinutes * 60_000);
    retained.until = until;
    await context.lifecycle.endDebugTurn(retained.runId, until);
    await context.lifecycle.event(retained.runId, executionId, 'debug_agent_finished', {
      exit_code: finished.exit.code,
      session_debug_until: until.toISOString(),
    });
    if (!this.sessions.has(retained.runId)) return;
    session.timer = this.expiry(retained.runId, until);
    // Follow-ups that came in while a harness without live input ran.
    const more = await this.takeDebugInputs(retained.runId);
    if (more.length > 0) await this.runAgent(session, more);
  }

  private expiry(runId: string, until: Date): NodeJS.Timeout {
    const timer = setTimeout(() => void this.close(runId), Math.max(0, until.getTime() - Date.now()));
    timer.unref();
    return timer;
  }

  /** Ends the debug window: stops any debug agent and removes the workspace. */
  async close(runId: string): Promise<void> {
    const session = this.sessions.get(runId);
    if (!session) return;
    this.sessions.delete(runId);
    clearTimeout(session.timer);
    await session.agent?.cancel();
    await this.context.workspaces.remove(session.retained.workspace).catch(() => undefined);
    await this.context.lifecycle.closeDebugWindow(runId).catch(() => undefined);
    await this.context.lifecycle
      .event(runId, session.retained.executionId, 'vm_shutdown', { reason: 'debug window closed' })
      .catch(() => undefined);
  }

  private async takeDebugInputs(runId: string): Promise<string[]> {
    return (await this.context.lifecycle.takeInputs(runId, 'debug')).map((input) => input.message);
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.sessions.keys()].map((runId) => this.close(runId)));
  }
}
