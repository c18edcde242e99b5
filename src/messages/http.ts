import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Authenticator } from '../identities/index.js';
import { authenticationRequired } from '../platform/http/errors.js';
import { ProblemResponses } from '../platform/http/openapi.js';
import type { Credential } from './access.js';
import {
  EventRunParams,
  EventsQuery,
  FullMessage,
  InboxParams,
  InboxQuery,
  MessageHeaders,
  MessageParams,
  ReportEventBody,
  ReportEventResponse,
  RunEvents,
  SendMessageBody,
  SendMessageResponse,
} from './schemas.js';
import type { MessagesService } from './service.js';

export interface MessageRouteDeps {
  messages: MessagesService;
  authenticate: Authenticator;
  verifyTaskToken(token: string): { runId: string; executionId: number } | null;
}

/**
 * /agent/messages and /agent/events. Routes take a run's task token or a member's API key, so they are public to
 * the API key check and read the credential themselves (as the scores route does).
 */
export function registerMessageRoutes(parent: FastifyInstance, deps: MessageRouteDeps): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const { messages } = deps;
  const tags = ['Orchestration'];
  const config = { public: true };
  const security = [{ apiKey: [] }];

  const credential = async (request: FastifyRequest): Promise<Credential> => {
    const authorization = request.headers.authorization;
    if (authorization === undefined) throw authenticationRequired('send a run task token or an API key');
    const claim = authorization.startsWith('Bearer ')
      ? deps.verifyTaskToken(authorization.slice('Bearer '.length).trim())
      : null;
    if (claim) return { kind: 'run', ...claim };
    const principal = await deps.authenticate.principal(authorization, request.ip);
    const team = request.headers['x-team-uid'] ?? request.headers['x-warp-team-uid'];
    return { kind: 'member', caller: deps.authenticate.team(principal, Array.isArray(team) ? team[0] : team) };
  };
  const who =
    "With a run's task token, the runs of its tree (same root run); with a member's API key, the runs the member sees. Any other run is 404, as one that does not exist.";

  app.post(
    '/agent/messages',
    {
      config,
      schema: {
        tags,
        summary: 'Send a message to runs of the same tree',
        description: `${who} A run sends as itself (sender_run_id is its own ID).`,
        security,
        body: SendMessageBody,
        response: { 200: SendMessageResponse, ...ProblemResponses },
      },
    },
    async (request) => messages.send(await credential(request), request.body),
  );
  app.get(
    '/agent/messages/:id',
    {
      config,
      schema: {
        tags,
        summary: "A run's inbox: message headers, oldest first",
        description: who,
        security,
        params: InboxParams,
        querystring: InboxQuery,
        response: { 200: MessageHeaders, ...ProblemResponses },
      },
    },
    async (request) => messages.inbox(await credential(request), request.params.id, request.query),
  );
  const read = {
    config,
    schema: {
      tags,
      summary: 'Read a message (marks it read and delivered)',
      description: who,
      security,
      params: MessageParams,
      response: { 200: FullMessage, ...ProblemResponses },
    },
  };
  app.get('/agent/messages/:id/read', read, async (request) =>
    messages.read(await credential(request), request.params.id),
  );
  // The orchestration client of Oz reads with a POST: the same operation.
  app.post('/agent/messages/:id/read', { ...read, schema: { ...read.schema, hide: true } }, async (request) =>
    messages.read(await credential(request), request.params.id),
  );
  app.post(
    '/agent/messages/:id/delivered',
    {
      config,
      schema: {
        tags,
        summary: 'Mark a message delivered (to the agent, not yet read)',
        description: who,
        security,
        params: MessageParams,
        response: { 200: Type.Object({}), ...ProblemResponses },
      },
    },
    async (request) => {
      await messages.delivered(await credential(request), request.params.id);
      return {};
    },
  );
  app.get(
    '/agent/events',
    {
      config,
      schema: {
        tags,
        summary: 'The timeline events of watched runs after a sequence (a cursor)',
        description: `${who} Page on by passing the last event's \`sequence\` as \`since\`.`,
        security,
        querystring: EventsQuery,
        response: { 200: RunEvents, ...ProblemResponses },
      },
    },
    async (request) => {
      const { run_ids: given, since, limit } = request.query;
      const ids = (Array.isArray(given) ? given : [given]).flatMap((value) => value.split(',')).filter(Boolean);
      return messages.events(await credential(request), ids, since, limit);
    },
  );
  app.post(
    '/agent/events/:runId',
    {
      config,
      schema: {
        tags,
        summary: 'Report an event of a run (it joins the run timeline)',
        description: `${who} A run reports about itself only.`,
        security,
        params: EventRunParams,
        body: ReportEventBody,
        response: { 200: ReportEventResponse, ...ProblemResponses },
      },
    },
    async (request) => messages.report(await credential(request), request.params.runId, request.body),
  );
}
