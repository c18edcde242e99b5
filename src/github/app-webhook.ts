import { createHash } from 'node:crypto';
import { verify } from '@octokit/webhooks-methods';
import type { FastifyInstance } from 'fastify';
import { authenticationRequired, integrationNotConfigured, invalidRequest } from '../platform/http/errors.js';

/** The scope of the App's replay keys in the webhooks' replay store. */
export const APP_REPLAY_SCOPE = 'github-app';

export interface AppWebhookOptions {
  /** HANGAR_GITHUB_WEBHOOK_SECRET; undefined: every delivery is refused. */
  secret: string | undefined;
  /** True the first time a replay key is seen (the webhooks' replay store, shared). */
  claimReplayKey: (key: string) => Promise<boolean>;
  /** Starts what the delivery asks for; answers the runs started. */
  dispatch: (event: string, deliveryId: string, payload: unknown) => Promise<string[]>;
}

/**
 * `POST /webhooks/github-app`: the deliveries of the operator's GitHub App. The signature (X-Hub-Signature-256,
 * HMAC-SHA256 of the exact bytes with the App's webhook secret) is checked before anything is read; a delivery is
 * acted on once: GitHub signs the body only, so the body's hash is the replay key, kept for good (a redelivery by
 * GitHub is the same body and is acknowledged without a second run).
 */
export async function registerAppWebhookRoute(root: FastifyInstance, options: AppWebhookOptions): Promise<void> {
  await root.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: 1024 * 1024 }, (_request, body, done) =>
      done(null, body),
    );
    scope.post('/webhooks/github-app', { schema: { hide: true } }, async (request, reply) => {
      if (options.secret === undefined)
        throw integrationNotConfigured('this server has no GitHub App webhook secret (HANGAR_GITHUB_WEBHOOK_SECRET)');
      const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      const signature = request.headers['x-hub-signature-256'];
      const text = body.toString('utf8');
      const valid = typeof signature === 'string' && (await verify(options.secret, text, signature).catch(() => false));
      if (!valid) throw authenticationRequired('the delivery is not signed with the GitHub App webhook secret');
      let payload: unknown;
      try {
        payload = JSON.parse(text);
      } catch {
        throw invalidRequest('the body is not valid JSON');
      }
      const event = String(request.headers['x-github-event'] ?? '');
      const deliveryId = String(request.headers['x-github-delivery'] ?? '');
      const replayKey = createHash('sha256').update(body).digest('hex');
      if (!(await options.claimReplayKey(replayKey))) return reply.code(202).send({ duplicate: true, runs: [] });
      const runs = await options.dispatch(event, deliveryId, payload);
      return reply.code(202).send({ duplicate: false, runs });
    });
  });
}
