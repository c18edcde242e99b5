import http from 'node:http';
import type { Duplex, Readable } from 'node:stream';

/**
 * A small client for the few Docker Engine API calls the container sandbox makes, on node:http. Docker Engine and
 * Podman's Docker-compatible service both answer it unchanged. dockerode was measured and not used: its stdin attach
 * against Podman 4.3 writes the attach options into the container's stdin (FIELD-NOTES); a hijacked stream on
 * node:http works on both, and the other calls are plain JSON requests.
 */
export class EngineClient {
  private readonly target: { socketPath: string } | { host: string; port: number };

  /** `unix:///var/run/docker.sock` or `tcp://host:2375` (DOCKER_HOST's forms; TLS is not supported). */
  constructor(readonly dockerHost: string) {
    if (dockerHost.startsWith('unix://')) this.target = { socketPath: dockerHost.slice('unix://'.length) };
    else if (dockerHost.startsWith('tcp://') || dockerHost.startsWith('http://')) {
      const url = new URL(dockerHost.replace(/^tcp:/, 'http:'));
      this.target = { host: url.hostname, port: Number(url.port || 2375) };
    } else throw new Error(`DOCKER_HOST must be unix:///path or tcp://host:port, not ${JSON.stringify(dockerHost)}`);
  }

  /** A JSON request; the body of any answer is parsed when it is JSON. Throws EngineError on 4xx/5xx. */
  async call<T = unknown>(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
    accept: number[] = [],
  ): Promise<{ status: number; body: T }> {
    const response = await this.send(method, path, body, headers);
    const text = await readAll(response);
    const parsed = parseJson(text);
    const status = response.statusCode ?? 0;
    if (status >= 400 && !accept.includes(status)) throw new EngineError(status, engineMessage(parsed, text));
    return { status, body: parsed as T };
  }

  /** A request whose answer streams (a pull's progress): the response, after a status check. */
  async stream(method: string, path: string, headers: Record<string, string> = {}): Promise<http.IncomingMessage> {
    const response = await this.send(method, path, undefined, headers);
    const status = response.statusCode ?? 0;
    if (status >= 400) {
      const text = await readAll(response);
      throw new EngineError(status, engineMessage(parseJson(text), text));
    }
    return response;
  }

  /**
   * Starts an exec with its streams hijacked: the socket carries stdin one way and the multiplexed stdout/stderr
   * the other. An engine that answers without upgrading gives the output stream alone (no stdin).
   */
  hijack(path: string, body: unknown): Promise<{ output: Readable; input: Duplex | undefined }> {
    return new Promise((resolve, reject) => {
      const payload = Buffer.from(JSON.stringify(body));
      const request = http.request({
        ...this.target,
        method: 'POST',
        path,
        headers: {
          'Content-Type': 'application/json',
          'Content-Length': payload.length,
          Connection: 'Upgrade',
          Upgrade: 'tcp',
        },
      });
      request.on('upgrade', (_response, socket, head) => {
        if (head.length > 0) socket.unshift(head);
        resolve({ output: socket, input: socket });
      });
      request.on('response', async (response) => {
        const status = response.statusCode ?? 0;
        if (status >= 400) {
          const text = await readAll(response);
          reject(new EngineError(status, engineMessage(parseJson(text), text)));
        } else resolve({ output: response, input: undefined });
      });
      request.on('error', reject);
      request.end(payload);
    });
  }

  private send(
    method: string,
    path: string,
    body: unknown,
    headers: Record<string, string>,
  ): Promise<http.IncomingMessage> {
    return new Promise((resolve, reject) => {
      const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
      const request = http.request({
        ...this.target,
        method,
        path,
        headers: {
          ...(payload ? { 'Content-Type': 'application/json', 'Content-Length': payload.length } : {}),
          ...headers,
        },
      });
      request.on('response', resolve);
      request.on('error', (error) =>
        reject(new Error(`cannot reach the container engine at ${this.dockerHost}: ${error.message}`)),
      );
      request.end(payload);
    });
  }
}

/** An answer of the engine with an error status; `message` is the engine's own reason. */
export class EngineError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function readAll(stream: Readable): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    stream.on('error', reject);
  });
}

function parseJson(text: string): unknown {
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return undefined;
  }
}

function engineMessage(parsed: unknown, text: string): string {
  const message = (parsed as { message?: unknown } | undefined)?.message;
  return typeof message === 'string' ? message.trim() : text.trim().slice(0, 500);
}

/**
 * Splits an exec's multiplexed output (8-byte frame headers: stream 1 stdout, 2 stderr, then a big-endian length)
 * into its two streams.
 */
export function demultiplex(source: Readable, stdout: (chunk: Buffer) => void, stderr: (chunk: Buffer) => void): void {
  let buffered: Buffer = Buffer.alloc(0);
  source.on('data', (chunk: Buffer) => {
    buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
    while (buffered.length >= 8) {
      const size = buffered.readUInt32BE(4);
      if (buffered.length < 8 + size) break;
      const payload = buffered.subarray(8, 8 + size);
      if (buffered[0] === 2) stderr(payload);
      else stdout(payload);
      buffered = buffered.subarray(8 + size);
    }
  });
}
