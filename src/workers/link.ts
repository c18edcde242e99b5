import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import WebSocket from 'ws';
import type { ServerMessage, TaskAssignment } from './protocol.js';

export interface WorkerLinkOptions {
  /** e.g. https://hangar.example (the API is under /api/v1) */
  server: string;
  workerId: string;
  apiKey: string;
  log: Logger;
  /** The server pings every 30 s by default; a link silent for this long is taken as gone. */
  silenceMs?: number;
  onAssignment(assignment: TaskAssignment): void;
  onCancellation(taskId: string, executionId: number, reason: string): void;
  onFollowups(taskId: string): void;
  /** Each time the link (re)connects: the worker tells what it holds and what it has. */
  onConnected(): void;
  /** Each time an open link drops (a run pod's worker gives up on a server gone past the lease). */
  onDisconnected?(): void;
}

/** The server refused the worker for good (bad key, bad worker ID): retrying would not help. */
export class WorkerRefusedError extends Error {}

interface Call {
  message: string;
  resolve(result: unknown): void;
  reject(error: Error): void;
}

const BACKOFF_MS = [500, 1000, 2000, 5000, 10_000, 30_000];

/**
 * The worker's end of the websocket. It reconnects with backoff when the connection drops, and every call
 * (a message with a call_id) is sent again after a reconnect until the server has replied to it, so what a
 * worker reports is applied even when the connection broke in between (the server applies each at most once
 * where it matters: transitions and ends are conditional on the run's state).
 */
export class WorkerLink {
  private socket: WebSocket | undefined;
  private readonly calls = new Map<string, Call>();
  private attempt = 0;
  private closed = false;
  private silenceTimer: NodeJS.Timeout | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  /** Settles when the link stops for good: closed by the worker (resolves) or refused by the server (rejects). */
  readonly ended: Promise<void>;
  private end!: (error?: Error) => void;

  constructor(private readonly options: WorkerLinkOptions) {
    this.ended = new Promise((resolve, reject) => {
      this.end = (error) => (error ? reject(error) : resolve());
    });
  }

  get connected(): boolean {
    return this.socket?.readyState === WebSocket.OPEN;
  }

  connect(): void {
    if (this.closed) return;
    const url = new URL(`${this.options.server.replace(/\/+$/, '')}/api/v1/selfhosted/worker/ws`);
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    url.searchParams.set('worker_id', this.options.workerId);
    const socket = new WebSocket(url, { headers: { authorization: `Bearer ${this.options.apiKey}` } });
    this.socket = socket;
    socket.on('unexpected-response', (_request, response) => {
      let body = '';
      response.on('data', (chunk: Buffer) => (body += chunk.toString()));
      response.on('end', () => {
        const status = response.statusCode ?? 0;
        let detail = body;
        try {
          detail = (JSON.parse(body) as { detail?: string }).detail ?? body;
        } catch {
          // not problem+json: keep the text
        }
        if (status === 400 || status === 401 || status === 403) {
          this.stop(new WorkerRefusedError(`the server refused this worker (HTTP ${status}): ${detail}`));
        } else {
          this.options.log.warn({ status }, `the server answered HTTP ${status}; retrying`);
          socket.terminate();
        }
      });
    });
    socket.on('open', () => {
      this.attempt = 0;
      this.options.log.info({ server: this.options.server, workerId: this.options.workerId }, 'connected');
      this.heard();
      this.options.onConnected();
      // Calls the last connection did not see answered go again, in their order.
      for (const call of this.calls.values()) socket.send(call.message);
    });
    socket.on('ping', () => this.heard());
    socket.on('message', (data) => {
      this.heard();
      // One message a turn of the event loop: frames that arrive together are emitted back to back, and what a
      // reply settles (a task's end frees its slot) must be done before the next message (an assignment) is read.
      const raw = data.toString();
      setImmediate(() => this.receive(raw));
    });
    socket.on('error', (error) => this.options.log.debug({ err: error }, 'connection error'));
    let opened = false;
    socket.on('open', () => (opened = true));
    socket.on('close', (code) => {
      clearTimeout(this.silenceTimer);
      if (this.socket === socket) this.socket = undefined;
      if (this.closed) return;
      // A run pod's execution ended on the server (docs/kubernetes.md): there is nothing to come back for.
      if (code === 4004) {
        this.stop(new WorkerRefusedError('the server says this execution has ended'));
        return;
      }
      if (opened) this.options.onDisconnected?.();
      const delay = BACKOFF_MS[Math.min(this.attempt++, BACKOFF_MS.length - 1)]!;
      this.options.log.warn({ retryInMs: delay }, 'disconnected from the server; reconnecting');
      this.retryTimer = setTimeout(() => this.connect(), delay);
    });
  }

  /** Sends a message and resolves with the server's reply; survives reconnects. */
  call(type: string, data: Record<string, unknown>): Promise<unknown> {
    const callId = randomUUID();
    const message = JSON.stringify({ type, data: { ...data, call_id: callId } });
    return new Promise((resolve, reject) => {
      this.calls.set(callId, { message, resolve, reject });
      if (this.connected) this.socket!.send(message);
    });
  }

  /** Sends a message now if connected; nothing is kept for later (statuses: the next connect sends a fresh one). */
  notify(type: string, data: Record<string, unknown>): void {
    if (this.connected) this.socket!.send(JSON.stringify({ type, data }));
  }

  /** Closes the link; calls still unanswered fail. */
  close(): void {
    this.stop();
  }

  private stop(error?: Error): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.retryTimer);
    clearTimeout(this.silenceTimer);
    this.socket?.close(1000, 'worker stopping');
    for (const call of this.calls.values()) call.reject(error ?? new Error('the worker link is closed'));
    this.calls.clear();
    this.end(error);
  }

  private heard(): void {
    clearTimeout(this.silenceTimer);
    const socket = this.socket;
    this.silenceTimer = setTimeout(() => {
      this.options.log.warn('the server went silent; reconnecting');
      socket?.terminate();
    }, this.options.silenceMs ?? 75_000);
  }

  private receive(raw: string): void {
    let message: ServerMessage;
    try {
      message = JSON.parse(raw) as ServerMessage;
    } catch {
      return;
    }
    switch (message.type) {
      case 'reply': {
        const call = this.calls.get(message.data.call_id);
        if (!call) return;
        this.calls.delete(message.data.call_id);
        if (message.data.ok) call.resolve(message.data.result);
        else call.reject(new Error(`the server refused ${JSON.parse(call.message).type}: ${message.data.error}`));
        return;
      }
      case 'task_assignment':
        this.options.onAssignment(message.data);
        return;
      case 'task_cancellation':
        this.options.onCancellation(message.data.task_id, message.data.execution_id, message.data.reason);
        return;
      case 'task_followups_available':
        this.options.onFollowups(message.data.task_id);
        return;
      default:
        // A newer server's message this worker does not know.
        return;
    }
  }
}
