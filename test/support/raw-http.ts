/**
 * HTTP requests as a hostile client sends them, which fetch() refuses to: any method, a header given several
 * times, `Upgrade`, a body with any content type (or a content type with no body). Answers are read whole; an
 * upgrade the server accepts (101) is closed at once and reported as such.
 */
import http from 'node:http';

export interface RawRequest {
  method: string;
  /** Path and query, sent as given (already percent-encoded where needed). */
  path: string;
  /** A header given as an array is sent once per value. */
  headers?: Record<string, string | string[]>;
  body?: string | Buffer;
}

export interface RawAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

export function rawRequest(baseUrl: string, request: RawRequest): Promise<RawAnswer> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const outgoing = http.request({
      host: url.hostname,
      port: url.port,
      method: request.method,
      path: request.path,
      // Framed by its length whatever the method (Node sends a DELETE's body unframed otherwise).
      headers: {
        ...request.headers,
        ...(request.body === undefined ? {} : { 'content-length': Buffer.byteLength(request.body) }),
      },
      // A connection of its own each time: a server may close one whose request body it did not read (a refusal
      // before the body), and a reused connection would then fail the next request.
      agent: false,
    });
    outgoing.on('error', reject);
    // A request the server never answers is a finding, not a test that hangs.
    outgoing.setTimeout(15_000, () =>
      outgoing.destroy(new Error(`no answer within 15 s to ${request.method} ${request.path.slice(0, 200)}`)),
    );
    outgoing.on('upgrade', (response, socket) => {
      socket.destroy();
      resolve({ status: response.statusCode ?? 0, headers: response.headers, text: '' });
    });
    outgoing.on('response', (response) => {
      // A live event stream does not end by itself: its headers are the answer.
      if (String(response.headers['content-type']).startsWith('text/event-stream')) {
        response.destroy();
        return resolve({ status: response.statusCode ?? 0, headers: response.headers, text: '' });
      }
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', reject);
      response.on('end', () =>
        resolve({
          status: response.statusCode ?? 0,
          headers: response.headers,
          text: Buffer.concat(chunks).toString(),
        }),
      );
    });
    outgoing.end(request.body);
  });
}
