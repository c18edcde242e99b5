import { createHmac, randomUUID } from 'node:crypto';
import { sign as signGithub } from '@octokit/webhooks-methods';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import Stripe from 'stripe';
import { Webhook as SvixWebhook } from 'svix';
import { eventually, script } from './engine.js';
import type { TestServer } from './server.js';

/**
 * Signing helpers for test deliveries: the providers' own packages where they publish one, hand-written HMAC only
 * for Sentry, PagerDuty and Vercel, which do not.
 */
export const signers: Record<
  string,
  (body: string, secret: string, options?: { at?: Date; id?: string }) => Promise<Record<string, string>>
> = {
  github: async (body, secret, options) => ({
    'x-hub-signature-256': await signGithub(secret, body),
    'x-github-delivery': options?.id ?? randomUUID(),
  }),
  stripe: async (body, secret, options) => ({
    'stripe-signature': new Stripe('sk_test_unused').webhooks.generateTestHeaderString({
      payload: body,
      secret,
      timestamp: Math.floor((options?.at ?? new Date()).getTime() / 1000),
    }),
  }),
  standard_webhooks: async (body, secret, options) => {
    const id = options?.id ?? `msg_${randomUUID()}`;
    const at = options?.at ?? new Date();
    return {
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': new StandardWebhook(secret).sign(id, at, body),
    };
  },
  svix: async (body, secret, options) => {
    const id = options?.id ?? `msg_${randomUUID()}`;
    const at = options?.at ?? new Date();
    return {
      'svix-id': id,
      'svix-timestamp': String(Math.floor(at.getTime() / 1000)),
      'svix-signature': new SvixWebhook(secret).sign(id, at, body),
    };
  },
  sentry: async (body, secret, options) => ({
    'sentry-hook-signature': createHmac('sha256', secret).update(body).digest('hex'),
    'request-id': options?.id ?? randomUUID(),
  }),
  pagerduty: async (body, secret, options) => ({
    'x-pagerduty-signature': `v1=${createHmac('sha256', secret).update(body).digest('hex')}`,
    'x-webhook-id': options?.id ?? randomUUID(),
  }),
  vercel: async (body, secret) => ({ 'x-vercel-signature': createHmac('sha1', secret).update(body).digest('hex') }),
};

export interface CreatedWebhook {
  uid: string;
  secret: string;
  url: string;
  name: string;
}

export async function createWebhook(
  hangar: TestServer,
  body: Record<string, unknown>,
  apiKey?: string,
): Promise<CreatedWebhook> {
  const response = await hangar.request('POST', '/api/v1/factory/webhooks', { body, apiKey });
  if (response.status !== 201)
    throw new Error(`creating the webhook failed: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body as CreatedWebhook;
}

/** POSTs raw bytes to an ingress URL, with no headers but the given ones (no content type unless given). */
export async function deliver(
  url: string,
  body: string | Buffer,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; body: any }> {
  const response = await fetch(url, { method: 'POST', headers, body });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // keep the text
  }
  return { status: response.status, headers: response.headers, body: parsed };
}

export async function deliveryLog(
  hangar: TestServer,
  uid: string,
  apiKey?: string,
): Promise<Array<{ delivery_id: string; status: string; size_bytes: number }>> {
  const response = await hangar.request('GET', `/api/v1/factory/webhooks/${uid}/deliveries?limit=200`, { apiKey });
  if (response.status !== 200)
    throw new Error(`reading the log failed: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body.deliveries;
}

/**
 * A signed webhook (`body`: its name, scheme, secret, ...) with an automation of the same name that starts a run for
 * every delivery it evaluates: tests of which deliveries count count the runs.
 */
export async function webhookWithAutomation(
  hangar: TestServer,
  body: { name: string; signature_scheme: string } & Record<string, unknown>,
): Promise<CreatedWebhook> {
  const hook = await createWebhook(hangar, { auth_mode: 'signature', ...body });
  const automation = await hangar.request('POST', '/api/v1/factory/automations', {
    body: {
      name: body.name,
      prompt: script({ say: 'deploying' }),
      triggers: [{ provider: 'webhook', event: 'received', filter: { webhook_ids: [hook.uid] } }],
    },
  });
  if (automation.status !== 201)
    throw new Error(`creating the automation failed: ${automation.status} ${JSON.stringify(automation.body)}`);
  return hook;
}

/** The runs a webhookWithAutomation's automation started (titled with its name), once every accepted delivery is evaluated. */
export async function runsStartedBy(hangar: TestServer, hook: CreatedWebhook): Promise<number> {
  await eventually('every accepted delivery evaluated', async () => {
    const waiting = await hangar.db
      .selectFrom('webhook_deliveries')
      .select('seq')
      .where('webhook_uid', '=', hook.uid)
      .where('status', '=', 'Accepted')
      .where('evaluated_at', 'is', null)
      .execute();
    return waiting.length === 0;
  });
  const runs = await hangar.db
    .selectFrom('runs')
    .select('id')
    .where('source', '=', 'WEBHOOK')
    .where('title', '=', hook.name)
    .execute();
  return runs.length;
}
