import { bodyHmacScheme } from './body-hmac.js';

/** GitHub: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256(secret, body)>`. */
export const github = bodyHmacScheme({
  name: 'github',
  header: 'X-Hub-Signature-256',
  prefix: 'sha256=',
  algorithm: 'sha256',
  deliveryIdHeaders: ['x-github-delivery'],
});
