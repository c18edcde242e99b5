import { Transform } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type Dispatcher, request as upstreamRequest } from 'undici';
import { CREDENTIAL_HEADERS } from './proxied-execution.js';

/** Headers of one connection, not of the message (RFC 9110 7.6.1), and those the proxy sets itself. */
const NOT_FORWARDED = new Set([
  'host',
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'te',
  'trailer',
  'content-length',
  ...CREDENTIAL_HEADERS,
]);

export interface Forwarding {
  url: string;
  /** Added to (and replacing) the client's headers: the credential the sandbox never sees. */
  headers: Record<string, string>;
  dispatcher?: Dispatcher;
  /**
   * Whether an unsuccessful answer's body goes back as it is. A model provider's error explains a bad request;
   * a team's MCP server's error page may carry anything, so only its status goes back.
   */
  errorBodies: boolean;
  /** Sent in place of the request's body (the model proxy's, with a setting added). */
  body?: Buffer;
  /** Sees the answer as it passes (the model proxy reads its usage); told once when it is over, however it ends. */
  watch?: AnswerWatcher;
}

export interface AnswerWatcher {
  /** The answer's status and content type, before its body; returns whether to see the body's chunks. */
  answered(status: number, contentType: string | undefined): boolean;
  chunk(chunk: Buffer): void;
  /** The body went through whole (`complete`), or the exchange ended otherwise (an error, the client gone). */
  ended(complete: boolean): void;
}

/**
 * Sends the request on to `url` with the credential added, and streams the answer back as it comes (server-sent
 * events included). The upstream request ends when the client goes away.
 */
export async function forward(request: FastifyRequest, reply: FastifyReply, to: Forwarding): Promise<FastifyReply> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined || NOT_FORWARDED.has(name)) continue;
    headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  Object.assign(
    headers,
    Object.fromEntries(Object.entries(to.headers).map(([name, value]) => [name.toLowerCase(), value])),
  );
  const abort = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) abort.abort();
  });
  const body = to.body ?? (Buffer.isBuffer(request.body) && request.body.length > 0 ? request.body : undefined);
  const watch = to.watch;
  let answer: Dispatcher.ResponseData;
  try {
    answer = await upstreamRequest(to.url, {
      method: request.method as Dispatcher.HttpMethod,
      headers,
      body,
      signal: abort.signal,
      ...(to.dispatcher ? { dispatcher: to.dispatcher } : {}),
    });
  } catch (error) {
    watch?.ended(false);
    throw error;
  }
  reply.code(answer.statusCode);
  const success = answer.statusCode >= 200 && answer.statusCode < 300;
  const contentType = answer.headers['content-type'];
  const seeBody = watch?.answered(answer.statusCode, Array.isArray(contentType) ? contentType[0] : contentType);
  if (!success && !to.errorBodies) {
    await answer.body.dump();
    watch?.ended(false);
    return reply.send();
  }
  for (const [name, value] of Object.entries(answer.headers)) {
    if (value === undefined || NOT_FORWARDED.has(name) || name === 'set-cookie') continue;
    reply.header(name, value);
  }
  if (!watch) return reply.send(answer.body);
  if (!seeBody) {
    answer.body.once('close', () => watch.ended(answer.body.readableEnded));
    return reply.send(answer.body);
  }
  // Each chunk is seen on its way, not after: a stream reaches the client as fast as without the watcher.
  let complete = false;
  const seen = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      watch.chunk(chunk);
      done(null, chunk);
    },
    flush(done) {
      complete = true;
      done();
    },
  });
  seen.once('close', () => watch.ended(complete));
  answer.body.once('error', (error) => seen.destroy(error));
  seen.once('error', () => answer.body.destroy());
  return reply.send(answer.body.pipe(seen));
}
