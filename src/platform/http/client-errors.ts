import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { ApiError, invalidRequest, problemBody } from './errors.js';

/** What Node's parser refused, as the one error type: a request head too large, one too slow, or malformed HTTP. */
function clientProblem(code: string | undefined): ApiError {
  if (code === 'HPE_HEADER_OVERFLOW')
    return new ApiError(431, 'invalid_request', 'the request line and headers are larger than this server accepts');
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT')
    return new ApiError(408, 'invalid_request', 'the request was not received in time', { retryable: true });
  return invalidRequest('the request is not valid HTTP');
}

/**
 * Fastify's `clientErrorHandler`: requests Node's HTTP parser refuses never reach Fastify's routing, so they are
 * answered here, with the same problem+json body as every other error (Fastify's own answer is a bare JSON object).
 * The request is not logged: its raw bytes may hold a URL credential, and the error is the client's.
 */
export function answerClientError(publicUrl: string) {
  return function (this: FastifyInstance, error: Error & { code?: string }, socket: Socket): void {
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const problem = clientProblem(error.code);
    const traceId = randomUUID();
    this.log.debug({ code: error.code, trace_id: traceId }, 'request refused by the HTTP parser');
    if (socket.writable) {
      const body = JSON.stringify(problemBody(problem, { publicUrl, instance: '', traceId }));
      socket.write(
        `HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status]}\r\n` +
          'Content-Type: application/problem+json; charset=utf-8\r\n' +
          `Content-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${traceId}\r\nConnection: close\r\n\r\n${body}`,
      );
    }
    socket.destroy(error);
  };
}
