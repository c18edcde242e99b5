import { randomBytes } from 'node:crypto';
import { github } from './github.js';
import { SIGNATURE_SCHEME_NAMES, type SignatureSchemeName } from './names.js';
import { pagerduty } from './pagerduty.js';
import type { SignatureScheme } from './scheme.js';
import { sentry } from './sentry.js';
import { standardWebhooks, standardWebhooksKey } from './standard-webhooks.js';
import { stripe } from './stripe.js';
import { vercel } from './vercel.js';

export type { SchemeVerdict, SignatureScheme, SignatureSchemeName, SignedDelivery } from './scheme.js';

export const SIGNATURE_SCHEMES: Record<SignatureSchemeName, SignatureScheme> = {
  github,
  stripe,
  standard_webhooks: standardWebhooks,
  sentry,
  pagerduty,
  vercel,
};

export { SIGNATURE_SCHEME_NAMES };

/** A fresh Standard Webhooks signing secret: `whsec_` + base64 of 24 random bytes, the size Svix issues. */
export function generateStandardWebhooksSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

/**
 * Whether `secret` can sign Standard Webhooks: base64 (after an optional `whsec_`) of a 24 to 64 byte key, the range
 * the specification asks for.
 */
export function isStandardWebhooksSecret(secret: string): boolean {
  const key = standardWebhooksKey(secret);
  return key !== null && key.length >= 24 && key.length <= 64;
}
