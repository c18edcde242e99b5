import { createHash } from 'node:crypto';

type Headers = Record<string, string | string[] | undefined>;

/** Identities longer than this are stored as their hash, so that a sender cannot bloat the log with its header. */
const MAX_IDENTITY_LENGTH = 200;

function header(headers: Headers, name: string): string | undefined {
  const value = headers[name.toLowerCase()];
  const text = (Array.isArray(value) ? value[0] : value)?.trim();
  return text ? text : undefined;
}

export function bodyHash(body: Buffer): string {
  return `sha256:${createHash('sha256').update(body).digest('hex')}`;
}

/**
 * A delivery's identity, in the interface's order of preference: the header the webhook names, the provider's own
 * delivery header (signed webhooks), `X-Service-Delivery-Id`, and else a hash of the body, so that a sender that
 * sets no ID has identical bodies count as duplicates. Without a body (one too large to read), null.
 */
export function deliveryIdentity(
  headers: Headers,
  body: Buffer | null,
  sources: { configuredHeader: string | null; providerHeaders: readonly string[] },
): string | null {
  const names = [
    ...(sources.configuredHeader ? [sources.configuredHeader] : []),
    ...sources.providerHeaders,
    'x-service-delivery-id',
  ];
  for (const name of names) {
    const value = header(headers, name);
    if (value !== undefined) return value.length > MAX_IDENTITY_LENGTH ? bodyHash(Buffer.from(value, 'utf8')) : value;
  }
  return body === null ? null : bodyHash(body);
}
