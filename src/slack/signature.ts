import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Slack's request signature (its "v0" scheme), the first gate of everything Slack sends (Events API, slash commands):
 * `X-Slack-Signature` is `v0=` and the hex HMAC-SHA256, keyed with the app's signing secret, of
 * `v0:<X-Slack-Request-Timestamp>:<the exact body>`. The timestamp is covered by the signature, so a request whose
 * timestamp is more than five minutes from now (either way) is refused: a captured request cannot be replayed later,
 * and within the window the event's own ID keeps a retry from acting twice.
 *
 * Kept apart from the team webhooks' schemes (src/webhooks/schemes/): those verify a team's own webhook with the
 * team's secret; this is the operator's Slack app, with the operator's signing secret, before any team is known.
 */

/** Slack's window: a timestamp further than this from the server's clock is refused. */
export const SLACK_MAX_SKEW_SECONDS = 5 * 60;

export type SlackSignatureRefusal = 'unsigned' | 'stale' | 'mismatch';

/** The `X-Slack-Signature` Slack would send for `body` at `timestamp` (seconds since the epoch, as its header says). */
export function slackSignature(signingSecret: string, timestamp: string, body: Buffer | string): string {
  const mac = createHmac('sha256', signingSecret);
  mac.update(`v0:${timestamp}:`);
  mac.update(body);
  return `v0=${mac.digest('hex')}`;
}

/**
 * Why a request is not Slack's, or undefined when it is: no signature or timestamp (`unsigned`), a timestamp outside
 * the five-minute window or not a number (`stale`), or a signature that is not this body's and timestamp's under
 * the secret (`mismatch`). Reads the headers and the raw bytes only; the body is parsed after this passes.
 */
export function slackSignatureRefusal(
  signingSecret: string,
  headers: { signature: string | undefined; timestamp: string | undefined },
  body: Buffer | string,
  now: Date,
): SlackSignatureRefusal | undefined {
  const { signature, timestamp } = headers;
  if (!signature || !timestamp) return 'unsigned';
  if (!/^\d{1,12}$/.test(timestamp)) return 'stale';
  if (Math.abs(now.getTime() / 1000 - Number(timestamp)) > SLACK_MAX_SKEW_SECONDS) return 'stale';
  const expected = Buffer.from(slackSignature(signingSecret, timestamp, body));
  const given = Buffer.from(signature);
  return given.length === expected.length && timingSafeEqual(given, expected) ? undefined : 'mismatch';
}
