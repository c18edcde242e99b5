import { Type } from 'typebox';
import { constantTimeEqual, hmacSha256 } from './crypto.js';
import { notAuthorized } from './http/errors.js';

/** The query string of a signed link, as download routes declare it. */
export const SignedLinkQuery = Type.Object({
  expires: Type.Optional(Type.String()),
  signature: Type.Optional(Type.String()),
});

/** How far ahead of this replica's clock another replica's may be when it signs a link. */
const CLOCK_SKEW_SECONDS = 60;

/**
 * Short-lived download links: the path, its parameters and an expiry signed with an instance key, so whoever
 * holds the link can fetch that one resource until it expires, without an API key.
 */
export class UrlSigner {
  constructor(
    private readonly key: string,
    /** Known once the server listens (with port 0 the port is chosen then). */
    private readonly publicUrl: () => string,
    /**
     * The longest lifetime a link may have. Verification enforces it too: a link whose expiry lies further out
     * (minted with an over-long lifetime, by a bug or an older version) is refused, not honoured for years.
     */
    private readonly maxTtlSeconds: number,
  ) {}

  private signature(path: string, params: Record<string, string>, expires: string): Buffer {
    const canonical = Object.keys(params)
      .sort()
      .map((name) => `${name}=${params[name]}`)
      .join('&');
    return hmacSha256(this.key, `${path}\n${canonical}\n${expires}`);
  }

  /** `path` starts with / and is below the public URL, e.g. /api/v1/downloads/... */
  sign(
    path: string,
    ttlSeconds: number,
    params: Record<string, string> = {},
    now = Date.now(),
  ): { url: string; expiresAt: Date } {
    if (ttlSeconds > this.maxTtlSeconds)
      throw new Error(`a download link lives at most ${this.maxTtlSeconds} s, asked for ${ttlSeconds} s`);
    const expires = String(Math.floor(now / 1000) + ttlSeconds);
    const query = new URLSearchParams({
      ...params,
      expires,
      signature: this.signature(path, params, expires).toString('base64url'),
    });
    return { url: `${this.publicUrl()}${path}?${query}`, expiresAt: new Date(Number(expires) * 1000) };
  }

  /** Whether the signature matches the path and parameters, and the link has not expired. */
  verify(
    path: string,
    query: { expires?: string; signature?: string },
    params: Record<string, string> = {},
    now = Date.now(),
  ): 'valid' | 'expired' | 'invalid' {
    const { expires, signature } = query;
    if (!expires || !signature || !/^\d{1,12}$/.test(expires)) return 'invalid';
    if (!constantTimeEqual(Buffer.from(signature, 'base64url'), this.signature(path, params, expires)))
      return 'invalid';
    if (Number(expires) * 1000 < now) return 'expired';
    // Replicas' clocks differ a little: a link signed on one a few seconds ahead is still good on another.
    return Number(expires) * 1000 > now + (this.maxTtlSeconds + CLOCK_SKEW_SECONDS) * 1000 ? 'invalid' : 'valid';
  }

  /** verify() for a download route: a link that is not valid is 403 with the reason. */
  require(path: string, query: { expires?: string; signature?: string }, params: Record<string, string> = {}): void {
    const verdict = this.verify(path, query, params);
    if (verdict === 'expired') throw notAuthorized('this download link has expired; ask the API for a new one');
    if (verdict === 'invalid') throw notAuthorized('this download link is not valid');
  }
}
