import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Shared machinery of the scripted model servers: a real HTTP server on 127.0.0.1 that answers each model request
 * with the next scripted turn and records every request it received, so tests can assert what the client sent.
 */

export interface ScriptedToolCall {
  /** The provider's tool-call ID; generated when absent. */
  id?: string;
  name: string;
  input: Record<string, unknown>;
  /** OpenAI Responses: the namespace of a tool offered in a `namespace` tool group (how Codex offers MCP tools). */
  namespace?: string;
}

export interface ScriptedTurn {
  text?: string;
  toolCalls?: ScriptedToolCall[];
  usage?: { input: number; output: number };
}

export interface RecordedRequest {
  method: string;
  /** The path with its query string. */
  url: string;
  headers: http.IncomingHttpHeaders;
  body: any;
}

/** What a protocol does with a request: write the turn to the response (as JSON or as a stream). */
export type TurnWriter = (
  request: RecordedRequest,
  turn: ScriptedTurn,
  response: http.ServerResponse,
  index: number,
) => void;

export interface Route {
  method: string;
  /** Matched against the path (without the query string). */
  path: RegExp;
  write: TurnWriter;
}

export class ScriptedModelServer {
  readonly requests: RecordedRequest[] = [];
  private readonly turns: ScriptedTurn[] = [];
  private served = 0;
  private readonly server: http.Server;
  private origin = '';

  constructor(
    private readonly routes: Route[],
    /** The body answered (as status 400, which clients do not retry) when no turn is left or no route matches. */
    private readonly errorBody: (message: string) => unknown,
  ) {
    this.server = http.createServer((request, response) => {
      void this.handle(request, response);
    });
  }

  /** The server's origin, e.g. http://127.0.0.1:12345 (no trailing slash). */
  get url(): string {
    return this.origin;
  }

  /** Queues turns, answered in order, one per model request. */
  script(...turns: ScriptedTurn[]): this {
    this.turns.push(...turns);
    return this;
  }

  /** Drops the turns not yet served (a test that scripted more than were asked for); returns how many. */
  discardTurns(): number {
    return this.turns.splice(0).length;
  }

  /** Turns not yet served. */
  get remaining(): number {
    return this.turns.length;
  }

  async listen(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.origin = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    let body: unknown = raw;
    try {
      body = raw.length > 0 ? JSON.parse(raw) : null;
    } catch {
      // kept as text
    }
    const recorded: RecordedRequest = {
      method: request.method ?? 'GET',
      url: request.url ?? '/',
      headers: request.headers,
      body,
    };
    this.requests.push(recorded);
    const pathname = new URL(recorded.url, 'http://x').pathname;
    const route = this.routes.find(
      (candidate) => candidate.method === recorded.method && candidate.path.test(pathname),
    );
    if (!route) return this.fail(response, 404, `no route for ${recorded.method} ${pathname}`);
    const turn = this.turns.shift();
    if (!turn)
      return this.fail(response, 400, `the scripted model server has no turn left for request ${this.requests.length}`);
    route.write(recorded, turn, response, this.served++);
  }

  private fail(response: http.ServerResponse, status: number, message: string): void {
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(JSON.stringify(this.errorBody(message)));
  }
}

/** Starts a server-sent-events response. */
export function startSse(response: http.ServerResponse): void {
  response.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  });
}

/** Writes one SSE event: `event:` line when named, then the JSON data. */
export function sse(response: http.ServerResponse, data: unknown, event?: string): void {
  response.write(
    `${event ? `event: ${event}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`,
  );
}

export function json(response: http.ServerResponse, body: unknown): void {
  response.writeHead(200, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}

/** Splits text into a few pieces so streams carry more than one delta. */
export function pieces(text: string, size = 8): string[] {
  const out: string[] = [];
  for (let index = 0; index < text.length; index += size) out.push(text.slice(index, index + size));
  return out.length > 0 ? out : [''];
}

export function usageOf(turn: ScriptedTurn): { input: number; output: number } {
  return turn.usage ?? { input: 10, output: 5 };
}

export function callId(call: ScriptedToolCall, turnIndex: number, callIndex: number, prefix: string): string {
  return call.id ?? `${prefix}_${turnIndex}_${callIndex}`;
}
