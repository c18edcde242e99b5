import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { DB } from '../database.js';
import type { EnvironmentSetups } from '../execution/index.js';
import { retryWhileUnavailable } from '../platform/db/retry-unavailable.js';
import type { Outcome, RunLifecycle } from '../runs/index.js';
import type { WorkerGitHubTokens } from './github-tokens.js';
import type { WorkerMessage, WorkerMessageOf } from './protocol.js';
import { WorkerSession } from './session.js';
import * as store from './store.js';

type TaskMessage = Exclude<WorkerMessage, { type: 'worker_status' | 'worker_skills' }>;

/**
 * Applies what workers say about their tasks to the database. Every write is conditional on the run still
 * being the worker's current execution, so a message that arrives late (after a reconnect, a cancel, or an
 * expired lease) changes nothing, and a terminal message is applied once however often it is sent. The same makes
 * it safe to apply a message again when the database was unavailable, which the hub does for a while (see retrying).
 */
export class WorkerTasks {
  /** Messages of one connection are applied in the order they came. */
  private readonly queues = new WeakMap<WorkerSession, Promise<void>>();
  private readonly pending = new Set<Promise<void>>();

  constructor(
    private readonly options: {
      db: Kysely<DB>;
      lifecycle: RunLifecycle;
      log: FastifyBaseLogger;
      environments: EnvironmentSetups;
      /** The GitHub tokens of the workers' executions: minted when asked, revoked when an execution ends. */
      github: WorkerGitHubTokens;
      /** A worker has room again, or a run went back to the queue. */
      onFreed: () => void;
      /**
       * How long a message is applied again while the database is unavailable (a restart, a failover, dropped
       * connections): past the run lease, so that what a worker reports during a blip the lease survives is kept.
       */
      retryForMs: number;
    },
  ) {}

  handle(session: WorkerSession, raw: string): void {
    const message = WorkerSession.parse(raw);
    if (message === null) return;
    const queued = (this.queues.get(session) ?? Promise.resolve()).then(async () => {
      if ('problem' in message) {
        session.reply(message.callId, { ok: false, error: message.problem });
        return;
      }
      const callId = 'call_id' in message.data ? message.data.call_id : undefined;
      if ('task_id' in message.data && !session.mayReport(message.data.task_id, message.data.execution_id)) {
        // A run pod's credential is good for its own execution alone, whoever else its Job's holder holds.
        session.reply(callId, { ok: false, error: 'this connection may only report on its own execution' });
        return;
      }
      try {
        const result = await this.retrying(session, message);
        session.reply(callId, { ok: true, result: result ?? null });
      } catch (error) {
        this.options.log.error(
          { err: error, workerHost: session.workerHost, type: message.type },
          'could not apply a worker message',
        );
        session.reply(callId, { ok: false, error: 'the server could not apply this message; send it again' });
      }
    });
    this.queues.set(session, queued);
    this.pending.add(queued);
    void queued.finally(() => this.pending.delete(queued));
  }

  /**
   * Applies a message, again with backoff while the database is unavailable, logging once per message that waits.
   * The worker's call waits for its reply meanwhile (it has no deadline), and the connection's later messages
   * queue behind this one, so they are still applied in the order they came. Once the connection has closed the
   * message is not tried again here: the worker sends every unanswered call again on its next connection, and
   * applying it on both could write its lines twice.
   */
  private retrying(session: WorkerSession, message: WorkerMessage): Promise<unknown> {
    let attempts = 0;
    let told = false;
    return retryWhileUnavailable(
      async () => {
        if (attempts++ > 0 && session.closed)
          throw new Error('the connection closed while the database was unavailable; the worker sends it again');
        return this.apply(session, message);
      },
      {
        forMs: this.options.retryForMs,
        onRetry: (error) => {
          if (told) return;
          told = true;
          this.options.log.warn(
            { err: error, workerHost: session.workerHost, type: message.type },
            'database unavailable: retrying a worker message',
          );
        },
      },
    );
  }

  /**
   * The connection's slot is free once the task's end is written. The reply goes out before any new offer can
   * (offers wait for I/O; the reply follows in this turn), so the worker has freed its slot when one arrives.
   */
  private release(session: WorkerSession, runId: string): void {
    session.tasks.delete(runId);
    setImmediate(() => this.options.onFreed());
  }

  /** Resolves when every message received so far has been applied. */
  async settled(): Promise<void> {
    await Promise.all([...this.pending]);
  }

  private async apply(session: WorkerSession, message: WorkerMessage): Promise<unknown> {
    const { db } = this.options;
    switch (message.type) {
      case 'worker_status':
        session.applyStatus(message.data);
        this.options.onFreed();
        return null;
      case 'worker_skills':
        await store.replaceSkills(db, session.teamUid, session.workerHost, message.data.skills);
        return null;
      default:
        return this.applyTask(session, message);
    }
  }

  private async applyTask(session: WorkerSession, message: TaskMessage): Promise<unknown> {
    const { db, lifecycle } = this.options;
    const { task_id: runId, execution_id: executionId } = message.data;
    const owner = session.owner;
    const ref = { runId, executionId };
    switch (message.type) {
      case 'task_claimed': {
        const [result] = await lifecycle.transition(owner, [
          {
            ...ref,
            from: 'PENDING',
            to: 'CLAIMED',
            events: [{ type: 'oz_run_claimed', payload: { worker_host: session.workerHost } }],
          },
        ]);
        if (result!.moved) session.tasks.set(runId, { executionId, confirmed: true });
        return { moved: result!.moved };
      }
      case 'task_rejected':
      case 'task_released': {
        const rejected = message.type === 'task_rejected';
        if (rejected) session.full = true;
        const reason = rejected
          ? `the worker had no room for it${message.data.reason ? `: ${message.data.reason}` : ''}`
          : message.data.reason;
        await lifecycle.requeue({ id: runId, owner, executionId }, reason);
        this.release(session, runId);
        await this.options.github.end(runId, executionId);
        return null;
      }
      case 'task_started': {
        const [result] = await lifecycle.transition(owner, [
          {
            ...ref,
            from: 'CLAIMED',
            to: 'INPROGRESS',
            events: [
              {
                type: 'agent_started',
                payload: {
                  harness: message.data.harness,
                  worker_host: session.workerHost,
                  ...(message.data.model_id ? { model_id: message.data.model_id } : {}),
                },
              },
            ],
            started: true,
            conversationId: message.data.conversation_id,
            harness: message.data.harness,
            ...(message.data.model_id ? { modelId: message.data.model_id } : {}),
            ...(message.data.setup_seconds !== undefined ? { setupSeconds: message.data.setup_seconds } : {}),
            takeInputs: true,
          },
        ]);
        return { moved: result!.moved, followups: result!.inputs };
      }
      case 'task_completed':
      case 'task_failed': {
        const [result] = await lifecycle.finish(owner, [
          { ...ref, outcome: outcomeOf(message), before: message.data.events_before ?? [] },
        ]);
        this.release(session, runId);
        await this.options.github.end(runId, executionId);
        return { result };
      }
    }
    if (message.type === 'task_github_access') return this.options.github.access(owner, runId, executionId);
    if (message.type === 'task_stopped') {
      // A cancelled run is no longer held, but its sandbox was this worker's until now.
      await lifecycle.clearSandboxIfCancelled(owner, runId, executionId);
      return null;
    }
    // The rest only touch a run the worker holds now.
    if (!(await store.holds(db, owner, runId, executionId))) return { held: false };
    switch (message.type) {
      case 'task_events':
        if (message.data.events.length > 0)
          await lifecycle.events(message.data.events.map((event) => ({ ...ref, event })));
        break;
      case 'task_output':
        await lifecycle.transcript(
          message.data.lines.map((line) => ({ run_id: runId, execution_id: executionId, ...line })),
        );
        break;
      case 'task_usage':
        await lifecycle.recordUsage(owner, runId, executionId, message.data.usage);
        break;
      case 'task_followups_take':
        return { held: true, followups: await lifecycle.takeInputs(runId, 'agent') };
      case 'task_followups_return':
        await lifecycle.returnInputs(runId, message.data.seqs);
        break;
      case 'task_environment': {
        const run = await db.selectFrom('runs').select('environment_id').where('id', '=', runId).executeTakeFirst();
        if (run?.environment_id === message.data.environment_id)
          await this.options.environments.recordSetupResult(message.data.environment_id, message.data.failed);
        break;
      }
    }
    return { held: true };
  }
}

/** How a worker's terminal message ends the run, in the engine's terms (the event follows from the state). */
function outcomeOf(message: WorkerMessageOf<'task_completed'> | WorkerMessageOf<'task_failed'>): Outcome {
  const { data } = message;
  if (message.type === 'task_completed') {
    return {
      state: message.data.state ?? 'SUCCEEDED',
      statusMessage: message.data.status_message ?? null,
      usage: data.usage ?? null,
      eventPayload: data.event_payload,
    };
  }
  return {
    state: message.data.state ?? 'FAILED',
    statusMessage: {
      message: message.data.message,
      ...(message.data.failure_reason ? { error_code: message.data.failure_reason } : {}),
      ...(message.data.retryable !== undefined ? { retryable: message.data.retryable } : {}),
    },
    usage: data.usage ?? null,
    eventPayload: {
      ...(message.data.exit_code !== undefined ? { exit_code: message.data.exit_code } : {}),
      ...data.event_payload,
    },
  };
}
