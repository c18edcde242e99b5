import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import WebSocket from 'ws';
import { eventually } from './engine.js';
import type { TestServer } from './server.js';
import { HANGAR_FROM_SOURCES } from './typescript.js';

export interface WorkerProcess {
  child: ChildProcess;
  /** Everything the worker wrote so far (its JSON log lines and errors). */
  output(): string;
  dataDir: string;
}

/** Starts `hangar worker` from the sources as a real process against `hangar`, with the default team's worker key unless told. */
export function startWorker(
  hangar: Pick<TestServer, 'url' | 'workerKey'>,
  workerId: string,
  options: { env?: Record<string, string>; args?: string[]; apiKey?: string } = {},
): WorkerProcess {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-worker-'));
  const child = spawn(
    process.execPath,
    [
      ...HANGAR_FROM_SOURCES,
      'worker',
      '--server',
      hangar.url,
      '--worker-id',
      workerId,
      '--data-dir',
      dataDir,
      ...(options.args ?? []),
    ],
    {
      env: {
        ...process.env,
        HANGAR_API_KEY: options.apiKey ?? hangar.workerKey,
        HANGAR_LOG_LEVEL: 'info',
        ...options.env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    },
  );
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  return { child, output: () => output, dataDir };
}

/**
 * How the server answers a websocket upgrade it refuses: the plain HTTP status, the problem body, and whether the
 * server then closed the connection (within 5 s).
 */
export function refusedUpgrade(
  hangar: TestServer,
  workerId: string,
  apiKey: string | null,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any; closed: boolean }> {
  const socket = new WebSocket(
    `${hangar.url.replace('http', 'ws')}/api/v1/selfhosted/worker/ws?worker_id=${encodeURIComponent(workerId)}`,
    {
      headers: { ...headers, ...(apiKey === null ? {} : { authorization: `Bearer ${apiKey}` }) },
    },
  );
  return new Promise((resolve, reject) => {
    socket.on('open', () => {
      socket.close();
      reject(new Error('the upgrade was accepted'));
    });
    socket.on('error', () => undefined);
    socket.on('unexpected-response', (_request, response) => {
      const connection = response.socket;
      let text = '';
      response.on('data', (chunk: Buffer) => (text += chunk));
      response.on('end', () => {
        const answer = { status: response.statusCode ?? 0, body: JSON.parse(text) };
        if (connection.destroyed) return resolve({ ...answer, closed: true });
        const timer = setTimeout(() => {
          connection.destroy();
          resolve({ ...answer, closed: false });
        }, 5000);
        connection.once('close', () => {
          clearTimeout(timer);
          resolve({ ...answer, closed: true });
        });
      });
    });
  });
}

/** The team's connected workers as the API lists them. */
export async function connectedWorkers(
  hangar: TestServer,
  apiKey?: string,
): Promise<Array<{ worker_host: string; connection_count: number }>> {
  const response = await hangar.request('GET', '/agent/connected-self-hosted-workers', apiKey ? { apiKey } : {});
  if (response.status !== 200)
    throw new Error(`connected workers: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body.workers;
}

export function waitForConnections(hangar: TestServer, workerId: string, count: number): Promise<void> {
  return eventually(
    `${count} connection(s) of ${workerId}`,
    async () =>
      (await connectedWorkers(hangar)).find((worker) => worker.worker_host === workerId)?.connection_count === count,
  );
}

/**
 * A hand-driven worker connection speaking the protocol, for what a real worker does not do on purpose (reject,
 * disconnect between messages, repeat a terminal message).
 */
export class ProtocolClient {
  private readonly received: any[] = [];
  private readonly waiters: Array<() => void> = [];
  private calls = 0;

  private constructor(readonly socket: WebSocket) {
    socket.on('message', (data) => {
      this.received.push(JSON.parse(data.toString()));
      for (const wake of this.waiters.splice(0)) wake();
    });
  }

  static async connect(hangar: TestServer, workerId: string, apiKey = hangar.workerKey): Promise<ProtocolClient> {
    const socket = new WebSocket(
      `${hangar.url.replace('http', 'ws')}/api/v1/selfhosted/worker/ws?worker_id=${encodeURIComponent(workerId)}`,
      {
        headers: { authorization: `Bearer ${apiKey}` },
      },
    );
    await new Promise((resolve, reject) => {
      socket.once('open', resolve);
      socket.once('error', reject);
    });
    return new ProtocolClient(socket);
  }

  send(type: string, data: Record<string, unknown>): void {
    this.socket.send(JSON.stringify({ type, data }));
  }

  /** Sends with a call_id and resolves with the server's reply. */
  async call(type: string, data: Record<string, unknown>): Promise<any> {
    const callId = `call-${++this.calls}`;
    this.send(type, { ...data, call_id: callId });
    return (await this.next((message) => message.type === 'reply' && message.data.call_id === callId)).data;
  }

  /** The first message received (before or after now) that `match` accepts; it is taken off the list. */
  async next(match: (message: any) => boolean, timeoutMs = 20_000): Promise<any> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const index = this.received.findIndex(match);
      if (index >= 0) return this.received.splice(index, 1)[0];
      if (Date.now() > deadline)
        throw new Error(`no matching message in ${timeoutMs} ms; received: ${JSON.stringify(this.received)}`);
      // Woken by the next message, or at the deadline.
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(0, deadline - Date.now()));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      if (this.socket.readyState === WebSocket.CLOSED) return resolve();
      this.socket.once('close', () => resolve());
      this.socket.close();
    });
  }
}
