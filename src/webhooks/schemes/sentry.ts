import type { SignatureScheme } from './scheme.js';
import { fail, hmac, matchesAny, MISMATCH, OK, parseHex, readHeader } from './verify-helpers.js';

/** Sentry integrations: `Sentry-Hook-Signature: <hex HMAC-SHA256(client secret, body)>`. */
export const sentry: SignatureScheme = {
  name: 'sentry',
  deliveryIdHeaders: ['request-id'],
  verify(delivery, secret) {
    if (secret === '') return fail('signing secret is empty');
    const header = readHeader(delivery, 'sentry-hook-signature', 'Sentry-Hook-Signature');
    if (!header.ok) return header;
    const signature = parseHex(header.value, 32);
    if (!signature) return fail('malformed Sentry-Hook-Signature header');
    return matchesAny(hmac('sha256', secret, delivery.body), [signature]) ? OK : MISMATCH;
  },
};
