/**
 * The signature schemes a webhook can verify: the one list the API's union, the factory's `signatureScheme`, the
 * CLI's help and the verifiers' table (schemes/index.ts, a record the compiler holds to it) are made from. Imports
 * nothing, so the client verbs can load it.
 */
export const SIGNATURE_SCHEME_NAMES = [
  'github',
  'stripe',
  'standard_webhooks',
  'sentry',
  'pagerduty',
  'vercel',
] as const;

export type SignatureSchemeName = (typeof SIGNATURE_SCHEME_NAMES)[number];
