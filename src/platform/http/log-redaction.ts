import type { FastifyRequest } from 'fastify';

/** What replaces a credential in a logged URL. */
const REDACTED = '[redacted]';

/** `webhooks` as the router also matches it: each letter as itself or %-encoded (find-my-way decodes them). */
const WEBHOOKS = [...'webhooks'].map((letter) => `(?:${letter}|%${letter.charCodeAt(0).toString(16)})`).join('');

/**
 * The token of a `url_token` webhook (`/webhooks/w/<uid>/<token>`): whatever follows the uid, up to the query.
 * Duplicate slashes, upper case, %-encoded letters, and a %2F between uid and token (which the router reads as
 * one uid) are covered; the token may be a wrong guess, and is kept out all the same.
 */
const WEBHOOK_TOKEN = new RegExp(`(/${WEBHOOKS}/+w/+[^/?#"\\s\\\\]*?)(?:/|%2f)[^?#"\\s\\\\]+`, 'gi');

/** A query parameter, as found in a URL anywhere in a log line (in JSON, where `"` and `\` end it). */
const QUERY_PARAMETER = /([?&;])([^=&#?"\s\\]{1,200})=([^&#"\s\\]*)/g;

/** The user information of a URL (`https://user:token@host`), e.g. a clone URL in an error message. */
const URL_USER_INFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^/@\s"\\]+@/gi;

/** Names (lower case, letters and digits only) of query parameters that are credentials wherever they appear. */
const CREDENTIAL_NAMES = new Set(['sig', 'auth', 'pwd', 'passwd', 'code']);
/** ... and endings of such names: `signature` (download links), `key` (the model proxy's `?key=`), `api_key`, ... */
const CREDENTIAL_ENDINGS = ['signature', 'key', 'token', 'secret', 'password', 'credential'];

function decodeSafe(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
}

/** Whether a query parameter's (raw) name names a credential: `signature`, `%73ignature`, `signature[]`, `X-Amz-Signature`. */
function isCredentialName(rawName: string): boolean {
  const name = decodeSafe(rawName)
    .toLowerCase()
    .replace(/\[.*$/, '')
    .replace(/[^a-z0-9]/g, '');
  return CREDENTIAL_NAMES.has(name) || CREDENTIAL_ENDINGS.some((ending) => name.endsWith(ending));
}

/**
 * Any text with the credentials URLs carry taken out: a `url_token` webhook's token, a download link's signature,
 * the model proxy's `?key=` task token (and any query parameter named like a credential), the user information
 * of a URL. Applied to every log line as it is written, whatever field or message holds the URL (the request
 * line, a plugin's own message, an error), so that whoever reads the logs cannot replay a delivery, fetch a
 * download or act as a run.
 */
export function redactCredentials(text: string): string {
  return text
    .replace(WEBHOOK_TOKEN, `$1/${REDACTED}`)
    .replace(QUERY_PARAMETER, (pair, separator: string, name: string) =>
      isCredentialName(name) ? `${separator}${name}=${REDACTED}` : pair,
    )
    .replace(URL_USER_INFO, `$1${REDACTED}@`);
}

/** Fastify's request serializer with the URL redacted; headers are left out altogether (API keys). */
export function serializeRequest(request: FastifyRequest): Record<string, unknown> {
  return {
    method: request.method,
    url: redactCredentials(request.url),
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  };
}
