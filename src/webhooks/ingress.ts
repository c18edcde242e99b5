import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { DB } from '../database.js';
import {
  authenticationRequired,
  invalidRequest,
  methodNotAllowed,
  notFound,
  payloadTooLarge,
  renderProblem,
  toApiError,
  tooManyRequests,
} from '../platform/http/errors.js';
import { secondsUntilBelow, slidingCount } from '../platform/sliding-window.js';
import { bodyHash, deliveryIdentity } from './identity.js';
import { IngressWrites } from './ingress-writes.js';
import { countAuthFailure, type SenderCounts } from './limits.js';
import { countDelivery } from './metrics.js';
import { KEEP_DELIVERY_DAYS } from './retention.js';
import { type SchemeVerdict, SIGNATURE_SCHEMES, type SignatureSchemeName } from './schemes/index.js';
import type { WebhooksService } from './service.js';
import * as store from './store.js';

/** The interface's limit on a delivery's body. */
export const MAX_DELIVERY_BYTES = 256 * 1024;

export interface IngressOptions {
  db: Kysely<DB>;
  webhooks: WebhooksService;
  /** Deliveries per sender and minute; the interface says 60. */
  ratePerMinute: number;
  /** Failed authentications per sender and minute before every delivery gets 429. */
  authFailuresPerMinute: number;
  publicUrl: string;
  /** Wakes the automation evaluators (of every replica) once a delivery is committed. */
  announceDelivery: () => void;
  now?: () => Date;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The webhook an ingress request addresses, found before its body is read. */
    webhook?: store.WebhookRow;
  }
}

type Params = { uid: string; token?: string };

function sameSecret(given: string, expected: string): boolean {
  // Hashing first makes the comparison constant-time whatever the lengths.
  const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();
  return timingSafeEqual(digest(given), digest(expected));
}

/** Checks the sender's credential the way the webhook's mode says. */
export function authenticateDelivery(
  webhook: Pick<store.WebhookRow, 'auth_mode' | 'signature_scheme'>,
  secret: string,
  request: { headers: Record<string, string | string[] | undefined>; body: Buffer; pathToken: string | undefined },
  now: Date,
): SchemeVerdict {
  if (webhook.auth_mode === 'url_token') {
    if (request.pathToken === undefined)
      return { ok: false, reason: 'this webhook takes its token in the URL: POST to /webhooks/w/<uid>/<token>' };
    return sameSecret(request.pathToken, secret)
      ? { ok: true }
      : { ok: false, reason: 'the token in the URL is not valid' };
  }
  if (request.pathToken !== undefined) return { ok: false, reason: 'this webhook takes no token in the URL' };
  if (webhook.auth_mode === 'token') {
    const authorization = request.headers.authorization;
    const match = typeof authorization === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(authorization) : null;
    if (!match) return { ok: false, reason: 'missing Authorization: Bearer <webhook secret> header' };
    return sameSecret(match[1]!, secret) ? { ok: true } : { ok: false, reason: 'the bearer token is not valid' };
  }
  const scheme = SIGNATURE_SCHEMES[webhook.signature_scheme as SignatureSchemeName];
  return scheme.verify({ headers: request.headers, body: request.body }, secret, now);
}

/** Parses a body as UTF-8 JSON; undefined when it is not. */
function parseJson(body: Buffer): unknown {
  try {
    const text = new TextDecoder('utf-8', { fatal: true }).decode(body);
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * `POST {app_url}/webhooks/w/<uid>[/<token>]`: outside /api/v1 and its API keys. The webhook is found and the
 * sender's limits checked before the body is read; a 202 is sent only once the delivery row is committed.
 */
export async function registerIngressRoutes(app: FastifyInstance, options: IngressOptions): Promise<void> {
  const { db, webhooks } = options;
  const now = options.now ?? (() => new Date());
  const writes = new IngressWrites(db);

  const checkLimits = (counts: SenderCounts) => {
    const failures = slidingCount(counts.failuresNow, counts.failuresBefore, counts.elapsed);
    if (failures >= options.authFailuresPerMinute) {
      const wait = secondsUntilBelow(
        counts.failuresNow,
        counts.failuresBefore,
        counts.elapsed,
        options.authFailuresPerMinute - 1,
      );
      throw tooManyRequests(`too many failed authentications from this sender; try again in ${wait} s`, wait);
    }
    const deliveries = slidingCount(counts.deliveriesNow, counts.deliveriesBefore, counts.elapsed);
    if (deliveries > options.ratePerMinute) {
      const wait = secondsUntilBelow(
        counts.deliveriesNow,
        counts.deliveriesBefore,
        counts.elapsed,
        options.ratePerMinute,
      );
      throw tooManyRequests(
        `more than ${options.ratePerMinute} deliveries per minute from this sender; try again in ${wait} s`,
        wait,
      );
    }
  };

  await app.register(async (scope) => {
    // Any content type, read as raw bytes: signatures are computed over the exact bytes sent.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: MAX_DELIVERY_BYTES }, (_request, body, done) =>
      done(null, body),
    );

    scope.setErrorHandler(async (error: FastifyError, request, reply) => {
      const problem =
        error.code === 'FST_ERR_CTP_BODY_TOO_LARGE'
          ? payloadTooLarge(`a delivery body is at most ${MAX_DELIVERY_BYTES} bytes`)
          : toApiError(error);
      if (problem.status === 413) countDelivery('Rejected (too large)');
      else if (problem.status === 429) countDelivery('Rejected (rate limited)');
      else if (problem.status === 404 && request.method === 'POST') countDelivery('Rejected (no webhook)');
      if (problem.status === 413 && request.webhook) {
        const size = Number(request.headers['content-length']) || MAX_DELIVERY_BYTES + 1;
        const identity =
          deliveryIdentity(request.headers, null, identitySources(request.webhook)) ?? `too-large-${request.id}`;
        await store
          .recordRejected(db, request.webhook.uid, identity, 'Rejected (too large)', size)
          .catch((failure) => request.log.error({ err: failure }, 'could not log a rejected delivery'));
      }
      if (problem.status >= 500) request.log.error({ err: error }, 'webhook delivery failed');
      return renderProblem(request, reply, options.publicUrl, problem);
    });

    scope.addHook('onRequest', async (request: FastifyRequest<{ Params: Params }>) => {
      if (request.method !== 'POST') return;
      // The sender's Content-Type means nothing here (any JSON is accepted), and a malformed one must not turn a
      // delivery into a 415: every body is read as the same raw bytes.
      request.headers['content-type'] = 'application/octet-stream';
      const found = await writes.lookUp(request.params.uid, request.ip);
      if (!found) throw notFound('no enabled webhook at this URL');
      checkLimits(found.counts);
      request.webhook = found.webhook;
    });

    const receive = async (request: FastifyRequest<{ Params: Params }>, reply: FastifyReply) => {
      const webhook = request.webhook!;
      const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      const sources = identitySources(webhook);
      const secret = await webhooks.credentialOf(webhook);
      const verdict: SchemeVerdict = secret
        ? authenticateDelivery(
            webhook,
            secret,
            { headers: request.headers, body, pathToken: request.params.token },
            now(),
          )
        : { ok: false, reason: `the webhook's secret ${webhook.secret_name ?? ''} no longer exists in the team` };
      if (!verdict.ok) {
        countDelivery('Rejected (auth)');
        await Promise.all([
          countAuthFailure(db, webhook.uid, request.ip),
          store.recordRejected(
            db,
            webhook.uid,
            deliveryIdentity(request.headers, body, sources)!,
            'Rejected (auth)',
            body.length,
          ),
        ]);
        throw authenticationRequired(`webhook authentication failed: ${verdict.reason}`);
      }
      const identity = deliveryIdentity(request.headers, body, sources) ?? bodyHash(body);
      if (parseJson(body) === undefined) {
        countDelivery('Rejected (invalid JSON)');
        await store.recordRejected(db, webhook.uid, identity, 'Rejected (invalid JSON)', body.length);
        throw invalidRequest(
          body.length === 0 ? 'the delivery has no body; send a JSON document' : 'the body is not valid JSON (UTF-8)',
        );
      }
      const status = await writes.accept({
        webhookUid: webhook.uid,
        deliveryId: identity,
        ...replayGuard(webhook, { headers: request.headers, body }),
        body: body.toString('utf8'),
        sizeBytes: body.length,
      });
      countDelivery(status);
      if (status === 'Accepted') options.announceDelivery();
      return reply.code(202).send({ delivery_id: identity });
    };

    const refuse = async (request: FastifyRequest) => {
      throw methodNotAllowed(`webhooks accept POST only, not ${request.method}`, 'POST');
    };
    for (const url of ['/webhooks/w/:uid', '/webhooks/w/:uid/:token']) {
      scope.post(url, { schema: { hide: true } }, receive);
      scope.route({ method: ['GET', 'PUT', 'PATCH', 'DELETE'], url, schema: { hide: true }, handler: refuse });
    }
  });
}

/**
 * What, besides its delivery identity, makes a verified delivery a duplicate. Every delivery's identity counts
 * (the interface's rule: one accepted delivery per ID, as long as the log keeps it). Signed deliveries also bring
 * the scheme's replay key, from the signed content only, since the ID header is unsigned and a captured delivery
 * could be replayed under a fresh one: kept for good, or for the delivery retention when the scheme signs a
 * timestamp (a replay is refused after 5 minutes anyway; the retention covers the providers' own retries).
 * Unsigned modes (a bearer or URL token) cannot tell a replay from a resend: their identity alone decides.
 */
function replayGuard(
  webhook: store.WebhookRow,
  delivery: { headers: Record<string, string | string[] | undefined>; body: Buffer },
) {
  if (webhook.auth_mode !== 'signature') return { replayKey: null, replayKeyDays: null };
  const scheme = SIGNATURE_SCHEMES[webhook.signature_scheme as SignatureSchemeName];
  return { replayKey: scheme.replayKey(delivery), replayKeyDays: scheme.timestamped ? KEEP_DELIVERY_DAYS : null };
}

function identitySources(webhook: store.WebhookRow) {
  const scheme =
    webhook.auth_mode === 'signature' ? SIGNATURE_SCHEMES[webhook.signature_scheme as SignatureSchemeName] : undefined;
  return { configuredHeader: webhook.delivery_id_header, providerHeaders: scheme?.deliveryIdHeaders ?? [] };
}
