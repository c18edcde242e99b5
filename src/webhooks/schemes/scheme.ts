import type { SignatureSchemeName } from './names.js';

export type { SignatureSchemeName };

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
  /** The provider's own delivery-ID header(s), lower-case, in order of preference ([] when the provider has none). Shown, never trusted. */
  deliveryIdHeaders: readonly string[];
  /**
   * What identifies the signed event, taken from signed content only (an unsigned header could be changed by
   * whoever replays a captured delivery): duplicates of signed deliveries are decided on it. Called only for a
   * delivery that verified.
   */
  replayKey(delivery: SignedDelivery): string;
  /**
   * The scheme signs a timestamp and refuses deliveries more than 5 minutes off, so a captured delivery is
   * useless after that and its replay key need not be kept for good.
   */
  timestamped: boolean;
}
