import type { SignatureScheme } from './scheme.js';
import { fail, hmac, matchesAny, MISMATCH, OK, parseHex, readHeader } from './verify-helpers.js';

/** GitHub: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256(secret, body)>`. */
export const github: SignatureScheme = {
  name: 'github',
  deliveryIdHeaders: ['x-github-delivery'],
  verify(delivery, secret) {
    if (secret === '') return fail('signing secret is empty');
    const header = readHeader(delivery, 'x-hub-signature-256', 'X-Hub-Signature-256');
    if (!header.ok) return header;
    const signature = header.value.startsWith('sha256=') ? parseHex(header.value.slice('sha256='.length), 32) : null;
    if (!signature) return fail('malformed X-Hub-Signature-256 header');
    return matchesAny(hmac('sha256', secret, delivery.body), [signature]) ? OK : MISMATCH;
  },
};
