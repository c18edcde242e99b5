import { bodyHmacScheme } from './body-hmac.js';

/** Sentry integrations: `Sentry-Hook-Signature: <hex HMAC-SHA256(client secret, body)>`. */
export const sentry = bodyHmacScheme({
  name: 'sentry',
  header: 'Sentry-Hook-Signature',
  algorithm: 'sha256',
  deliveryIdHeaders: ['request-id'],
});
