export type SignatureSchemeName = 'github' | 'stripe' | 'standard_webhooks' | 'sentry' | 'pagerduty' | 'vercel';

/** Header names are lower-case, as Node gives them. */
export interface SignedDelivery {
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

export type SchemeVerdict = { ok: true } | { ok: false; reason: string };

export interface SignatureScheme {
  name: SignatureSchemeName;
  /** Checks the delivery's signature with the signing secret; `now` for the age checks. Never throws. */
  verify(delivery: SignedDelivery, secret: string, now: Date): SchemeVerdict;
  /** The provider's own delivery-ID header(s), lower-case, in order of preference ([] when the provider has none). */
  deliveryIdHeaders: readonly string[];
}
