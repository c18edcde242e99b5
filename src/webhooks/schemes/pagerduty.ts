import { bodyHash } from '../identity.js';
import type { SignatureScheme } from './scheme.js';
import { fail, hmac, MISMATCH, matchesAny, OK, parseHex, readHeader } from './verify-helpers.js';

/**
 * PagerDuty (v3 webhooks): `X-PagerDuty-Signature: v1=<hex>[, v1=<hex>...]`, each an HMAC-SHA256 of the body.
 * Several signatures are sent while a secret is being rotated, so any one matching is enough.
 */
export const pagerduty: SignatureScheme = {
  name: 'pagerduty',
  deliveryIdHeaders: ['x-webhook-id'],
  // Only the body is signed (X-Webhook-Id is not); the body carries the event's own ID.
  replayKey: (delivery) => bodyHash(delivery.body),
  timestamped: false,
  verify(delivery, secret) {
    if (secret === '') return fail('signing secret is empty');
    const header = readHeader(delivery, 'x-pagerduty-signature', 'X-PagerDuty-Signature');
    if (!header.ok) return header;
    const signatures: Buffer[] = [];
    for (const entry of header.value.split(',')) {
      const [version, value, extra] = entry.trim().split('=');
      if (value === undefined || extra !== undefined) return fail('malformed X-PagerDuty-Signature header');
      // Versions other than v1 are for a future PagerDuty; they are skipped, not treated as errors.
      if (version !== 'v1') continue;
      const signature = parseHex(value, 32);
      if (!signature) return fail('malformed X-PagerDuty-Signature header');
      signatures.push(signature);
    }
    if (signatures.length === 0) return fail('X-PagerDuty-Signature header has no v1 signature');
    return matchesAny(hmac('sha256', secret, delivery.body), signatures) ? OK : MISMATCH;
  },
};
