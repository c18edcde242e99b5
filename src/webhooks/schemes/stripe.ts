import { bodyHash } from '../identity.js';
import type { SignatureScheme } from './scheme.js';
import {
  fail,
  hmac,
  MISMATCH,
  matchesAny,
  OK,
  parseHex,
  parseUnixSeconds,
  readHeader,
  timestampProblem,
} from './verify-helpers.js';

/**
 * Stripe: `Stripe-Signature: t=<unix seconds>,v1=<hex>[,v1=<hex>...][,v0=<hex>]`, each v1 an HMAC-SHA256 of
 * `${t}.${body}`. Several v1 appear while a secret is being rolled, so any one matching is enough; v0 (test-mode
 * legacy) and unknown schemes are ignored. The timestamp is signed too, which is what makes the age check hold.
 */
export const stripe: SignatureScheme = {
  name: 'stripe',
  deliveryIdHeaders: [],
  // The body (with the event's evt_ ID in it), not `t`: Stripe retries an event with a new timestamp, and a retry
  // is the same event.
  replayKey: (delivery) => bodyHash(delivery.body),
  timestamped: true,
  verify(delivery, secret, now) {
    if (secret === '') return fail('signing secret is empty');
    const header = readHeader(delivery, 'stripe-signature', 'Stripe-Signature');
    if (!header.ok) return header;
    let timestamp: string | undefined;
    const signatures: Buffer[] = [];
    for (const item of header.value.split(',')) {
      const at = item.indexOf('=');
      if (at <= 0) return fail('malformed Stripe-Signature header');
      const key = item.slice(0, at).trim();
      const value = item.slice(at + 1).trim();
      if (key === 't') {
        if (timestamp !== undefined) return fail('malformed Stripe-Signature header: more than one timestamp');
        timestamp = value;
      } else if (key === 'v1') {
        const signature = parseHex(value, 32);
        if (!signature) return fail('malformed Stripe-Signature header');
        signatures.push(signature);
      }
    }
    const seconds = timestamp === undefined ? null : parseUnixSeconds(timestamp);
    if (seconds === null) return fail('Stripe-Signature header has no valid timestamp');
    if (signatures.length === 0) return fail('Stripe-Signature header has no v1 signature');
    const problem = timestampProblem(seconds, now);
    if (problem) return fail(problem);
    return matchesAny(hmac('sha256', secret, `${timestamp}.`, delivery.body), signatures) ? OK : MISMATCH;
  },
};
