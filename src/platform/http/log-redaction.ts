import type { FastifyRequest } from 'fastify';

/** What replaces a credential in a logged URL. */
const REDACTED = '[redacted]';

/** Query parameters that are credentials: the signature of a download link (the link itself is the key). */
const CREDENTIAL_PARAMS = ['signature'];

/**
 * A request URL with the credentials some URLs carry taken out: the token segment of a `url_token` webhook
 * (`/webhooks/w/<uid>/<token>`) and the signature of a signed download link. Whoever reads the logs must not be
 * able to replay a delivery or fetch a download.
 */
export function redactUrl(url: string): string {
  const queryStart = url.indexOf('?');
  const path = queryStart === -1 ? url : url.slice(0, queryStart);
  const query = queryStart === -1 ? '' : url.slice(queryStart + 1);
  const safePath = path.replace(/^(\/webhooks\/w\/[^/]*\/)[^/]+/, `$1${REDACTED}`);
  if (query === '') return safePath + (queryStart === -1 ? '' : '?');
  const safeQuery = query
    .split('&')
    .map((pair) => {
      const name = pair.split('=', 1)[0]!;
      return CREDENTIAL_PARAMS.includes(decodeURIComponentSafe(name).toLowerCase()) ? `${name}=${REDACTED}` : pair;
    })
    .join('&');
  return `${safePath}?${safeQuery}`;
}

function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
}

/** Fastify's request serializer with the URL redacted; headers are left out altogether (API keys). */
export function serializeRequest(request: FastifyRequest): Record<string, unknown> {
  return {
    method: request.method,
    url: redactUrl(request.url),
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  };
}
