import type { SignatureScheme } from './scheme.js';
import { fail, hmac, matchesAny, MISMATCH, OK, parseHex, readHeader } from './verify-helpers.js';

/** Vercel: `X-Vercel-Signature: <hex HMAC-SHA1(secret, body)>` (SHA-1 is Vercel's choice, not ours). */
export const vercel: SignatureScheme = {
  name: 'vercel',
  deliveryIdHeaders: [],
  verify(delivery, secret) {
    if (secret === '') return fail('signing secret is empty');
    const header = readHeader(delivery, 'x-vercel-signature', 'X-Vercel-Signature');
    if (!header.ok) return header;
    const signature = parseHex(header.value, 20);
    if (!signature) return fail('malformed X-Vercel-Signature header');
    return matchesAny(hmac('sha1', secret, delivery.body), [signature]) ? OK : MISMATCH;
  },
};
