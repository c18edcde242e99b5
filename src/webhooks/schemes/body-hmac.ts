import { bodyHash } from '../identity.js';
import type { SignatureScheme, SignatureSchemeName } from './scheme.js';
import { fail, hmac, MISMATCH, matchesAny, OK, parseHex, readHeader } from './verify-helpers.js';

/** The schemes that send one hex HMAC of the raw body in one header, maybe after a fixed prefix. */
export function bodyHmacScheme(options: {
  name: SignatureSchemeName;
  /** As written in the provider's documentation; looked up lower-case. */
  header: string;
  prefix?: string;
  algorithm: 'sha1' | 'sha256';
  deliveryIdHeaders: readonly string[];
}): SignatureScheme {
  const bytes = options.algorithm === 'sha1' ? 20 : 32;
  const prefix = options.prefix ?? '';
  return {
    name: options.name,
    deliveryIdHeaders: options.deliveryIdHeaders,
    // The signature covers the body alone: the body is the event (its delivery-ID header is not signed).
    replayKey: (delivery) => bodyHash(delivery.body),
    timestamped: false,
    verify(delivery, secret) {
      if (secret === '') return fail('signing secret is empty');
      const header = readHeader(delivery, options.header.toLowerCase(), options.header);
      if (!header.ok) return header;
      const signature = header.value.startsWith(prefix) ? parseHex(header.value.slice(prefix.length), bytes) : null;
      if (!signature) return fail(`malformed ${options.header} header`);
      return matchesAny(hmac(options.algorithm, secret, delivery.body), [signature]) ? OK : MISMATCH;
    },
  };
}
