import type { EnvironmentConfig } from '../environments/index.js';
import type { ArtifactSink, FollowupInput, RunFile, RunLedger, TranscriptLine } from '../execution/index.js';
import type { ResolvedDefinition } from '../mcp/index.js';
import {
  type Finish,
  type FinishResult,
  isCompletion,
  type TimelineEvent,
  type TranscriptRow,
  type Transition,
  type TransitionResult,
} from '../runs/index.js';
import type { WorkerLink } from './link.js';
import type { TaskAssignment } from './protocol.js';
import { type ArtifactRetry, HarnessSupportArtifacts } from './remote-artifacts.js';

/**
 * A worker's ledger: what an execution records goes to the server over the worker's link, as the task
 * messages of the protocol; what it reads (environment, history, variables) came with the assignment.
 * Artifacts go through the server's harness-support API with the execution's task token, as a harness's own
 * calls would (remote-artifacts.ts), tried again while the server answers 503.
 */
export class RemoteLedger implements RunLedger {
  private readonly assignments = new Map<string, TaskAssignment>();
  readonly artifacts: ArtifactSink;

  constructor(
    private readonly link: WorkerLink,
    /** e.g. https://hangar.example/api/v1, as this worker reaches the server */
    private readonly apiUrl: string,
    readonly maxArtifactBytes: number,
    /** How long an artifact the server cannot record yet (503) is tried again: see remote-artifacts.ts. */
    artifactRetry: ArtifactRetry,
  ) {
    this.artifacts = new HarnessSupportArtifacts(
      apiUrl,
      (runId) => this.assignment(runId).env_vars.HANGAR_TASK_TOKEN ?? '',
      artifactRetry,
    );
  }

  track(assignment: TaskAssignment): void {
    this.assignments.set(assignment.task_id, assignment);
  }

  forget(taskId: string): void {
    this.assignments.delete(taskId);
  }

  private assignment(runId: string): TaskAssignment {
    const assignment = this.assignments.get(runId);
    if (!assignment) throw new Error(`task ${runId} is not one of this worker's`);
    return assignment;
  }

  private call(type: string, runId: string, executionId: number, data: Record<string, unknown> = {}) {
    return this.link.call(type, { task_id: runId, execution_id: executionId, ...data }) as Promise<
      Record<string, unknown>
    >;
  }

  async transition(transition: Transition): Promise<TransitionResult> {
    const { runId, executionId } = transition;
    if (transition.from === 'PENDING' && transition.to === 'CLAIMED') {
      // The server writes oz_run_claimed itself, naming the worker.
      const reply = await this.call('task_claimed', runId, executionId);
      const others = transition.events.filter((event) => event.type !== 'oz_run_claimed');
      if (reply.moved === true && others.length > 0) await this.events(runId, executionId, others);
      return { moved: reply.moved === true, inputs: [] };
    }
    if (transition.from === 'CLAIMED' && transition.to === 'INPROGRESS') {
      // Events that rode with the transition (the sandbox is ready, the setup is done) go first.
      const before = transition.events.filter((event) => event.type !== 'agent_started');
      if (before.length > 0) await this.events(runId, executionId, before);
      const reply = await this.call('task_started', runId, executionId, {
        harness: transition.harness ?? '',
        conversation_id: transition.conversationId ?? '',
        ...(transition.modelId ? { model_id: transition.modelId } : {}),
        ...(transition.setupSeconds !== undefined ? { setup_seconds: transition.setupSeconds } : {}),
      });
      return { moved: reply.moved === true, inputs: (reply.followups as string[] | undefined) ?? [] };
    }
    throw new Error(`a worker cannot move a run from ${transition.from} to ${transition.to}`);
  }

  async events(runId: string, executionId: number, events: TimelineEvent[]): Promise<void> {
    if (events.length > 0) await this.call('task_events', runId, executionId, { events });
  }

  async transcript(rows: TranscriptRow[]): Promise<void> {
    const first = rows[0];
    if (!first) return;
    await this.call('task_output', first.run_id, first.execution_id, {
      lines: rows.map((row) => ({ stream: row.stream, line: row.line })),
    });
  }

  async finish(finish: Finish): Promise<FinishResult> {
    const { runId, executionId, outcome, before } = finish;
    // The server's own engine writes the last transcript lines with the end; over the link they go just before it.
    if (finish.transcript && finish.transcript.length > 0) await this.transcript(finish.transcript);
    const common = { usage: outcome.usage, event_payload: outcome.eventPayload, events_before: before };
    const reply = isCompletion(outcome.state)
      ? await this.call('task_completed', runId, executionId, {
          ...common,
          state: outcome.state,
          status_message: outcome.statusMessage,
        })
      : await this.call('task_failed', runId, executionId, {
          ...common,
          state: outcome.state,
          message: String(outcome.statusMessage?.message ?? 'the run failed'),
          ...(typeof outcome.statusMessage?.error_code === 'string'
            ? { failure_reason: outcome.statusMessage.error_code }
            : {}),
          ...(typeof outcome.statusMessage?.retryable === 'boolean'
            ? { retryable: outcome.statusMessage.retryable }
            : {}),
          ...(typeof outcome.eventPayload?.exit_code === 'number' || outcome.eventPayload?.exit_code === null
            ? { exit_code: outcome.eventPayload.exit_code }
            : {}),
        });
    return reply.result as FinishResult;
  }

  async takeFollowups(runId: string, executionId: number): Promise<FollowupInput[]> {
    const reply = await this.call('task_followups_take', runId, executionId);
    return (reply.followups as FollowupInput[] | undefined) ?? [];
  }

  async returnFollowups(runId: string, executionId: number, seqs: string[]): Promise<void> {
    await this.call('task_followups_return', runId, executionId, { seqs });
  }

  async requeue(runId: string, executionId: number, reason: string): Promise<void> {
    await this.call('task_released', runId, executionId, { reason });
  }

  async clearSandboxIfCancelled(runId: string, executionId: number): Promise<void> {
    await this.call('task_stopped', runId, executionId);
  }

  async usage(runId: string, executionId: number, usage: Record<string, number>): Promise<void> {
    await this.call('task_usage', runId, executionId, { usage });
  }

  async usageBefore(runId: string): Promise<Record<string, number> | null> {
    return this.assignment(runId).usage_before ?? null;
  }

  async history(_conversationId: string, runId: string): Promise<TranscriptLine[]> {
    return this.assignment(runId).history.map((entry) => ({
      executionId: entry.execution_id,
      stream: entry.stream,
      line: entry.line,
      at: new Date(entry.at),
    }));
  }

  async environment(_teamUid: string, _environmentId: string, runId: string): Promise<EnvironmentConfig | undefined> {
    return this.assignment(runId).environment ?? undefined;
  }

  async attachments(runId: string): Promise<RunFile[]> {
    return (this.assignment(runId).attachments ?? []).map((file) => ({
      file_name: file.file_name,
      data: Buffer.from(file.data_base64, 'base64'),
    }));
  }

  async recordSetupResult(environmentId: string, failed: boolean, runId: string, executionId: number): Promise<void> {
    await this.call('task_environment', runId, executionId, { environment_id: environmentId, failed });
  }

  async authSecret(_teamUid: string, runId: string, name: string): Promise<string | undefined> {
    return this.assignment(runId).auth_secrets?.[name];
  }

  async registrySecret(_teamUid: string, _environmentId: string, runId: string): Promise<string | undefined> {
    return this.assignment(runId).registry_secret;
  }

  async mcpServer(_teamUid: string, runId: string, uid: string): Promise<ResolvedDefinition> {
    const server = this.assignment(runId).mcp_servers?.[uid];
    if (!server) throw new Error(`MCP server ${uid} does not exist or this team cannot use it`);
    return server;
  }

  variables(runId: string): Record<string, string> {
    // The harness reaches the server the way this worker does.
    return { ...this.assignment(runId).env_vars, HANGAR_API_URL: this.apiUrl };
  }
}
