import { createHash } from 'node:crypto';
import { verify } from '@octokit/webhooks-methods';
import type { FastifyInstance } from 'fastify';
import {
  authenticationRequired,
  integrationNotConfigured,
  invalidRequest,
  tooManyRequests,
} from '../platform/http/errors.js';
import { secondsUntilBelow, slidingCount } from '../platform/sliding-window.js';

/** The scope of the App's replay keys in the webhooks' replay store. */
export const APP_REPLAY_SCOPE = 'github-app';
/** How long a delivery's replay key is kept: past GitHub's 3 days of redelivery. */
export const APP_REPLAY_KEY_DAYS = 7;
/**
 * The oldest event acted on, by the time GitHub put in the signed body. Less than the keys are kept (a day for
 * clocks), so a delivery replayed once its key is gone is always too old.
 */
export const APP_MAX_EVENT_AGE_DAYS = APP_REPLAY_KEY_DAYS - 1;

export interface AppDelivery {
  event: string;
  deliveryId: string;
  /** The SHA-256 of the body: the signature covers the body only, so that is what a replay repeats. */
  replayKey: string;
  payload: unknown;
}

export interface AppWebhookOptions {
  /** HANGAR_GITHUB_WEBHOOK_SECRET; undefined: every delivery is refused. */
  secret: string | undefined;
  /**
   * Starts what the delivery asks for, claiming its replay keys in the same unit: `duplicate` when they were
   * claimed before. A run that does not start keeps no key, so GitHub's redelivery can try again; `ignored` says
   * why nothing started when its sender may not start runs (for the App's delivery log; the thread is told apart).
   */
  dispatch: (delivery: AppDelivery) => Promise<{ duplicate: boolean; runs: string[]; ignored?: string }>;
  /**
   * Failed signatures per sender (its address) and minute, after which every delivery from it gets 429 before its
   * body is read (HANGAR_WEBHOOK_AUTH_FAILURES_PER_MINUTE, as the team webhooks). GitHub signs every delivery, so
   * it never gets there; a sender guessing at the secret does. Deliveries themselves are not limited per sender:
   * they all come from GitHub's few addresses.
   */
  authFailures: {
    perMinute: number;
    counts: (sender: string) => Promise<{ failuresNow: number; failuresBefore: number; elapsed: number }>;
    record: (sender: string) => Promise<void>;
  };
  now?: () => Date;
}

/**
 * When the event happened, as GitHub wrote it in the signed body: the review's submission, the comment's creation,
 * or the issue's or pull request's last change (a label's addition is one). Undefined when the body names none.
 */
export function eventTime(payload: unknown): Date | undefined {
  const body = payload as Record<string, Record<string, unknown> | undefined> | null;
  if (typeof body !== 'object' || body === null) return undefined;
  for (const value of [
    body.review?.submitted_at,
    body.comment?.created_at,
    body.issue?.updated_at,
    body.pull_request?.updated_at,
  ]) {
    if (typeof value !== 'string') continue;
    const time = new Date(value);
    if (!Number.isNaN(time.getTime())) return time;
  }
  return undefined;
}

/**
 * `POST /webhooks/github-app`: the deliveries of the operator's GitHub App. The signature (X-Hub-Signature-256,
 * HMAC-SHA256 of the exact bytes with the App's webhook secret) is checked before anything is read. A delivery is
 * acted on once: GitHub signs the body only, so the body's hash is the replay key, kept APP_REPLAY_KEY_DAYS (a
 * redelivery by GitHub is the same body and is acknowledged without a second run). An event older than
 * APP_MAX_EVENT_AGE_DAYS, or without its time, starts nothing: that is what keeps a capture from being replayed
 * once its key is gone.
 */
export async function registerAppWebhookRoute(root: FastifyInstance, options: AppWebhookOptions): Promise<void> {
  const now = options.now ?? (() => new Date());
  await root.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: 1024 * 1024 }, (_request, body, done) =>
      done(null, body),
    );
    scope.addHook('onRequest', async (request) => {
      if (request.method !== 'POST') return;
      const { perMinute, counts } = options.authFailures;
      const { failuresNow, failuresBefore, elapsed } = await counts(request.ip);
      if (slidingCount(failuresNow, failuresBefore, elapsed) >= perMinute) {
        const wait = secondsUntilBelow(failuresNow, failuresBefore, elapsed, perMinute - 1);
        throw tooManyRequests(`too many failed signatures from this sender; try again in ${wait} s`, wait);
      }
    });
    scope.post('/webhooks/github-app', { schema: { hide: true } }, async (request, reply) => {
      if (options.secret === undefined)
        throw integrationNotConfigured('this server has no GitHub App webhook secret (HANGAR_GITHUB_WEBHOOK_SECRET)');
      const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      const signature = request.headers['x-hub-signature-256'];
      const text = body.toString('utf8');
      const valid = typeof signature === 'string' && (await verify(options.secret, text, signature).catch(() => false));
      if (!valid) {
        await options.authFailures.record(request.ip);
        throw authenticationRequired('the delivery is not signed with the GitHub App webhook secret');
      }
      let payload: unknown;
      try {
        payload = JSON.parse(text);
      } catch {
        throw invalidRequest('the body is not valid JSON');
      }
      const at = eventTime(payload);
      if (at === undefined || now().getTime() - at.getTime() > APP_MAX_EVENT_AGE_DAYS * 86_400_000)
        return reply.code(202).send({ duplicate: false, runs: [], ignored: 'the event is too old or has no time' });
      const outcome = await options.dispatch({
        event: String(request.headers['x-github-event'] ?? ''),
        deliveryId: String(request.headers['x-github-delivery'] ?? ''),
        replayKey: createHash('sha256').update(body).digest('hex'),
        payload,
      });
      return reply.code(202).send(outcome);
    });
  });
}
