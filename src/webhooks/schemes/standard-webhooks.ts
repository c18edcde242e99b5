import { createHash } from 'node:crypto';
import type { SignatureScheme, SignedDelivery } from './scheme.js';
import {
  fail,
  hmac,
  MISMATCH,
  matchesAny,
  OK,
  parseBase64,
  parseUnixSeconds,
  readHeader,
  timestampProblem,
} from './verify-helpers.js';

/**
 * Standard Webhooks (https://www.standardwebhooks.com), also sent by Svix under `svix-*` header names:
 * `webhook-signature: v1,<base64> [v1,<base64>...]`, each an HMAC-SHA256 of `${id}.${timestamp}.${body}` keyed
 * with the base64-decoded secret.
 */

const SECRET_PREFIX = 'whsec_';

/** The HMAC key inside a `whsec_<base64>` secret (prefix optional, as the reference libraries allow), or null. */
export function standardWebhooksKey(secret: string): Buffer | null {
  const key = parseBase64(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret);
  return key && key.length > 0 ? key : null;
}

/** The headers' prefix: Standard Webhooks names when a `webhook-signature` came, otherwise Svix's. */
function headerPrefix(delivery: SignedDelivery): 'webhook-' | 'svix-' {
  return delivery.headers['webhook-signature'] === undefined && delivery.headers['svix-signature'] !== undefined
    ? 'svix-'
    : 'webhook-';
}

export const standardWebhooks: SignatureScheme = {
  name: 'standard_webhooks',
  deliveryIdHeaders: ['webhook-id', 'svix-id'],
  // The message ID is signed, and the specification makes it the idempotency key: a retry keeps it (with a new
  // timestamp and signature), so it is what makes a duplicate here.
  replayKey(delivery) {
    const id = readHeader(delivery, `${headerPrefix(delivery)}id`, 'id');
    return `id:${createHash('sha256')
      .update(id.ok ? id.value : '')
      .digest('hex')}`;
  },
  timestamped: true,
  verify(delivery, secret, now) {
    const key = standardWebhooksKey(secret);
    // A secret that is not base64 would otherwise surface as a baffling 'signature does not match' on every delivery.
    if (!key) return fail('signing secret is not a Standard Webhooks secret (whsec_ followed by base64)');
    const prefix = headerPrefix(delivery);
    const signatureHeader = readHeader(delivery, `${prefix}signature`, `${prefix}signature`);
    if (!signatureHeader.ok) return signatureHeader;
    const id = readHeader(delivery, `${prefix}id`, `${prefix}id`);
    if (!id.ok) return id;
    const timestamp = readHeader(delivery, `${prefix}timestamp`, `${prefix}timestamp`);
    if (!timestamp.ok) return timestamp;

    const signatures: Buffer[] = [];
    for (const entry of signatureHeader.value.split(/\s+/)) {
      const [version, value, extra] = entry.split(',');
      if (value === undefined || extra !== undefined) return fail(`malformed ${prefix}signature header`);
      // Other versions (v1a asymmetric signatures, future ones) are not ours to check; skipping them is the spec.
      if (version !== 'v1') continue;
      const signature = parseBase64(value);
      if (!signature) return fail(`malformed ${prefix}signature header`);
      signatures.push(signature);
    }
    if (signatures.length === 0) return fail(`${prefix}signature header has no v1 signature`);
    const seconds = parseUnixSeconds(timestamp.value);
    if (seconds === null) return fail(`malformed ${prefix}timestamp header`);
    const problem = timestampProblem(seconds, now);
    if (problem) return fail(problem);
    return matchesAny(hmac('sha256', key, `${id.value}.${timestamp.value}.`, delivery.body), signatures)
      ? OK
      : MISMATCH;
  },
};
