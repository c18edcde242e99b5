import { bodyHmacScheme } from './body-hmac.js';

/** Vercel: `X-Vercel-Signature: <hex HMAC-SHA1(secret, body)>` (SHA-1 is Vercel's choice, not ours). */
export const vercel = bodyHmacScheme({
  name: 'vercel',
  header: 'X-Vercel-Signature',
  algorithm: 'sha1',
  deliveryIdHeaders: [],
});
