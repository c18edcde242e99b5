import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { callerOf } from '../identities/index.js';
import { ProblemResponses } from '../platform/http/openapi.js';
import {
  CreateWebhookBody,
  DeliveryItem,
  DeliveryList,
  DeliveryParams,
  ListDeliveriesQuery,
  ListWebhooksQuery,
  RotateWebhookBody,
  UpdateWebhookBody,
  WebhookItem,
  WebhookList,
  WebhookUidParams,
} from './schemas.js';
import type { WebhooksService } from './service.js';

export function registerWebhookRoutes(parent: FastifyInstance, webhooks: WebhooksService): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['Webhooks'];
  const item = { 200: WebhookItem, ...ProblemResponses };

  app.get(
    '/factory/webhooks',
    {
      schema: {
        tags,
        summary: "List the team's webhooks",
        querystring: ListWebhooksQuery,
        response: { 200: WebhookList, ...ProblemResponses },
      },
    },
    async (request) => webhooks.list(callerOf(request), request.query.factory_uid),
  );
  app.post(
    '/factory/webhooks',
    {
      schema: {
        tags,
        summary: 'Create a webhook (team admin)',
        description: 'The response carries the secret once (for url_token, inside url too); it is never shown again.',
        body: CreateWebhookBody,
        response: { 201: WebhookItem, ...ProblemResponses },
      },
    },
    async (request, reply) => reply.code(201).send(await webhooks.create(callerOf(request), request.body)),
  );
  app.get(
    '/factory/webhooks/:uid',
    { schema: { tags, summary: 'Get a webhook', params: WebhookUidParams, response: item } },
    async (request) => webhooks.get(callerOf(request), request.params.uid),
  );
  app.put(
    '/factory/webhooks/:uid',
    {
      schema: {
        tags,
        summary: 'Change a webhook (team admin): enable, disable, rename, change how senders authenticate',
        description:
          'Omitted fields stay; null clears. Changing auth_mode or signature_scheme issues a new secret, shown once.',
        params: WebhookUidParams,
        body: UpdateWebhookBody,
        response: item,
      },
    },
    async (request) => webhooks.update(callerOf(request), request.params.uid, request.body),
  );
  app.delete(
    '/factory/webhooks/:uid',
    {
      schema: {
        tags,
        summary: 'Delete a webhook (team admin); automations that select it stay and stop firing',
        params: WebhookUidParams,
      },
    },
    async (request, reply) => {
      await webhooks.delete(callerOf(request), request.params.uid);
      return reply.code(204).send();
    },
  );
  app.post(
    '/factory/webhooks/:uid/rotate',
    {
      schema: {
        tags,
        summary: 'Rotate the secret (team admin): the old one fails at once',
        description:
          'Give secret for providers that issue their own (Stripe, Sentry, PagerDuty, Vercel); otherwise one is generated.',
        params: WebhookUidParams,
        body: RotateWebhookBody,
        response: item,
      },
    },
    async (request) => webhooks.rotate(callerOf(request), request.params.uid, request.body?.secret),
  );
  app.get(
    '/factory/webhooks/:uid/deliveries',
    {
      schema: {
        tags,
        summary: 'The delivery log, newest first',
        params: WebhookUidParams,
        querystring: ListDeliveriesQuery,
        response: { 200: DeliveryList, ...ProblemResponses },
      },
    },
    async (request) =>
      webhooks.deliveries(callerOf(request), request.params.uid, request.query.limit ?? 50, request.query.cursor),
  );
  app.get(
    '/factory/webhooks/:uid/deliveries/:delivery_id',
    {
      schema: {
        tags,
        summary: 'One delivery, with its payload and the runs it started',
        params: DeliveryParams,
        response: { 200: DeliveryItem, ...ProblemResponses },
      },
    },
    async (request) => webhooks.delivery(callerOf(request), request.params.uid, request.params.delivery_id),
  );
}
