import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import { Type } from 'typebox';
import type { DB } from '../database.js';
import { callerOf } from '../identities/index.js';
import type { Bus } from '../platform/bus.js';
import { ProblemResponses } from '../platform/http/openapi.js';
import { SignedLinkQuery, type UrlSigner } from '../platform/signed-urls.js';
import { streamRunEvents } from './live.js';
import type { RunOutputs } from './output.js';
import { ConversationIdParams, ConversationResponse, RunIdParams } from './schemas.js';

export interface RunOutputRouteDeps {
  outputs: RunOutputs;
  signer: UrlSigner;
  db: Kysely<DB>;
  bus: Bus;
}

const who = (request: Parameters<typeof callerOf>[0]) => {
  const caller = callerOf(request);
  return { teamUid: caller.teamUid, principalUid: caller.principal.uid };
};

/** Conversation, transcript (as signed links and their downloads) and the live event stream of runs. */
export function registerRunOutputRoutes(parent: FastifyInstance, deps: RunOutputRouteDeps): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const { outputs } = deps;
  const redirect = {
    302: Type.Null({ description: 'Location holds a time-limited download link' }),
    ...ProblemResponses,
  };

  app.get(
    '/agent/runs/:runId/conversation',
    {
      schema: {
        tags: ['Runs'],
        summary: 'Normalized conversation of a run',
        params: RunIdParams,
        response: { 200: ConversationResponse, ...ProblemResponses },
      },
    },
    async (request) => outputs.runConversation(who(request), request.params.runId),
  );
  app.get(
    '/agent/runs/:runId/transcript',
    {
      schema: {
        tags: ['Runs'],
        summary: 'Raw transcript of a run (redirect to a time-limited link)',
        params: RunIdParams,
        response: redirect,
      },
    },
    async (request, reply) => reply.redirect(await outputs.runTranscriptLink(who(request), request.params.runId), 302),
  );
  app.get(
    '/agent/conversations/:conversationId',
    {
      schema: {
        tags: ['Conversations'],
        summary: 'Normalized conversation',
        params: ConversationIdParams,
        response: { 200: ConversationResponse, ...ProblemResponses },
      },
    },
    async (request) => outputs.conversation(who(request), request.params.conversationId),
  );
  app.get(
    '/agent/conversations/:conversationId/transcript',
    {
      schema: {
        tags: ['Conversations'],
        summary: 'Raw transcript of a conversation (redirect to a time-limited link)',
        params: ConversationIdParams,
        response: redirect,
      },
    },
    async (request, reply) =>
      reply.redirect(await outputs.conversationTranscriptLink(who(request), request.params.conversationId), 302),
  );

  const shutdown = new AbortController();
  parent.addHook('preClose', async () => shutdown.abort());
  app.get(
    '/agent/runs/:runId/events',
    {
      schema: {
        tags: ['Runs'],
        summary: 'Live events of a run (Server-Sent Events)',
        description:
          '`timeline` events carry timeline entries, `output` events the harness output (with the parsed protocol event), `end` the terminal state. Resume with `Last-Event-ID`.',
        params: RunIdParams,
        response: { 200: Type.String({ description: 'text/event-stream' }), ...ProblemResponses },
      },
    },
    async (request, reply) =>
      streamRunEvents(deps.db, deps.bus, who(request), request.params.runId, request, reply, shutdown.signal),
  );

  // Downloads: no API key; the signed link is the credential.

  app.get(
    '/downloads/runs/:runId/transcript',
    { schema: { hide: true, params: RunIdParams, querystring: SignedLinkQuery }, config: { public: true } },
    async (request, reply) => {
      deps.signer.require(
        `/api/v1/downloads/runs/${encodeURIComponent(request.params.runId)}/transcript`,
        request.query,
      );
      return reply
        .type('application/x-ndjson; charset=utf-8')
        .header('content-disposition', `attachment; filename="transcript-${request.params.runId}.jsonl"`)
        .send(await outputs.rawTranscript([request.params.runId]));
    },
  );
  app.get(
    '/downloads/conversations/transcript',
    {
      schema: {
        hide: true,
        querystring: Type.Object({
          runs: Type.String({ maxLength: 100_000 }),
          expires: Type.Optional(Type.String()),
          signature: Type.Optional(Type.String()),
        }),
      },
      config: { public: true },
    },
    async (request, reply) => {
      deps.signer.require('/api/v1/downloads/conversations/transcript', request.query, { runs: request.query.runs });
      return reply
        .type('application/x-ndjson; charset=utf-8')
        .send(await outputs.rawTranscript(request.query.runs.split(',')));
    },
  );
}
