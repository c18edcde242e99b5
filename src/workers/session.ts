import { randomUUID } from 'node:crypto';
import type { WebSocket } from 'ws';
import { schemaProblem } from '../platform/schema-problem.js';
import { checkWorkerMessage, type ServerMessage, WORKER_MESSAGE_TYPES, type WorkerMessage } from './protocol.js';
import { workerOwner } from './store.js';

interface HeldTask {
  executionId: number;
  /** The worker said it has the task (claimed it, or listed it in a status); until then it may be in flight. */
  confirmed: boolean;
}

/**
 * One websocket connection of a self-hosted worker, as the replica holding it sees it: who it is, how many
 * tasks it takes, which runs it holds. Frames are parsed and checked here; what they mean is the hub's.
 */
export class WorkerSession {
  readonly id = randomUUID();
  readonly owner: string;
  /** Tasks this connection holds; their leases are renewed while it is here. */
  readonly tasks = new Map<string, HeldTask>();
  capacity = 0;
  accepting = false;
  /** Refused a task for lack of room: no more offers until its next status. */
  full = false;
  lastSeen = Date.now();
  closed = false;

  constructor(
    readonly socket: WebSocket,
    readonly teamUid: string,
    readonly workerHost: string,
    /** The worker key that opened the connection: it closes when the key is revoked. */
    readonly keyUid: string,
    /**
     * A run pod's connection (an execution credential, docs/kubernetes.md): it acts on this one execution, held by
     * `owner` (whoever created the pod's Job), and is never offered a run.
     */
    readonly execution?: { runId: string; executionId: number; owner: string },
  ) {
    this.owner = execution?.owner ?? workerOwner(teamUid, workerHost);
  }

  get free(): number {
    if (this.execution) return 0;
    return this.accepting && !this.full && !this.closed ? Math.max(0, this.capacity - this.tasks.size) : 0;
  }

  /** Whether this connection may report on a task: any its worker holds, or a run pod's own execution only. */
  mayReport(taskId: string, executionId: number): boolean {
    return !this.execution || (this.execution.runId === taskId && this.execution.executionId === executionId);
  }

  send(message: ServerMessage): boolean {
    if (this.closed || this.socket.readyState !== this.socket.OPEN) return false;
    this.socket.send(JSON.stringify(message));
    return true;
  }

  reply(callId: string | undefined, outcome: { ok: true; result: unknown } | { ok: false; error: string }): void {
    if (callId !== undefined) this.send({ type: 'reply', data: { call_id: callId, ...outcome } });
  }

  /** A status from the worker: what it holds now. Confirmed tasks it no longer lists are gone from it. */
  applyStatus(status: Extract<WorkerMessage, { type: 'worker_status' }>['data']): void {
    this.capacity = status.max_concurrent_tasks;
    this.accepting = status.accepting;
    this.full = false;
    const listed = new Map(
      status.running
        .filter((task) => this.mayReport(task.task_id, task.execution_id))
        .map((task) => [task.task_id, task.execution_id]),
    );
    for (const [taskId, task] of this.tasks) if (task.confirmed && !listed.has(taskId)) this.tasks.delete(taskId);
    for (const [taskId, executionId] of listed) this.tasks.set(taskId, { executionId, confirmed: true });
  }

  /**
   * A frame as the worker sent it: a known, valid message, null for one to ignore (not JSON, or a type this
   * server does not know), or the problem with a known type's data (answered when it had a call_id).
   */
  static parse(raw: string): WorkerMessage | null | { problem: string; callId: string | undefined } {
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch {
      return null;
    }
    if (
      typeof value !== 'object' ||
      value === null ||
      !WORKER_MESSAGE_TYPES.has((value as { type?: unknown }).type as string)
    )
      return null;
    if (checkWorkerMessage.Check(value)) return value;
    const callId = (value as { data?: { call_id?: unknown } }).data?.call_id;
    return {
      problem: schemaProblem(checkWorkerMessage, value, (value as { type: string }).type),
      callId: typeof callId === 'string' ? callId : undefined,
    };
  }
}
