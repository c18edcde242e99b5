import type http from 'node:http';
import type { PropagationPolicy } from './garbage-collector.js';
import { badRequest, StatusError } from './status.js';

/** The double's HTTP plumbing: JSON answers, request bodies, DELETE's options. */
export function deleteOptions(
  body: unknown,
  query: URLSearchParams,
): { propagationPolicy?: PropagationPolicy; gracePeriodSeconds?: number } {
  const options = (body ?? {}) as {
    propagationPolicy?: PropagationPolicy;
    gracePeriodSeconds?: number;
    orphanDependents?: boolean;
  };
  const policy =
    (query.get('propagationPolicy') as PropagationPolicy | null) ??
    options.propagationPolicy ??
    (options.orphanDependents === true || query.get('orphanDependents') === 'true' ? 'Orphan' : undefined);
  const grace = query.get('gracePeriodSeconds') ?? options.gracePeriodSeconds;
  return {
    ...(policy ? { propagationPolicy: policy } : {}),
    ...(grace !== undefined && grace !== null ? { gracePeriodSeconds: Number(grace) } : {}),
  };
}

export function and<T>(first: (value: T) => boolean, second: (value: T) => boolean): (value: T) => boolean {
  return (value) => first(value) && second(value);
}

export function notFoundResource(): StatusError {
  return new StatusError({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: 'the server could not find the requested resource',
    reason: 'NotFound',
    details: {},
    code: 404,
  });
}

export function json(response: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response
    .writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) })
    .end(text);
}

export function readBody(request: http.IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      if (!text) return resolve(undefined);
      try {
        resolve(JSON.parse(text));
      } catch {
        reject(badRequest(`the request body is not JSON: ${text.slice(0, 80)}`));
      }
    });
    request.on('error', reject);
  });
}
