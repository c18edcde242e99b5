import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { callerOf, principalOf } from '../identities/index.js';
import { ProblemResponses } from '../platform/http/openapi.js';
import { PATTERN_IN_WORDS } from '../platform/http/validation-message.js';
import { IDEMPOTENCY_KEY_HOURS, idempotencyKey, MAX_IDEMPOTENCY_KEY_LENGTH } from './idempotency.js';
import { metadataFilterFromQuery } from './metadata.js';
import {
  CreateRunBody,
  CreateRunResponse,
  FollowupBody,
  ListRunsQuery,
  ListRunsResponse,
  RunIdParams,
  RunItem,
  type RunSource,
  TimelineResponse,
} from './schemas.js';
import type { RunsService } from './service.js';

/**
 * The clients that say who they are (X-Hangar-Client), with the source their runs get; any other value, or none, is
 * API. Only sources that change nothing but the label: LOCAL and GITHUB_ACTION runs, for example, cannot be
 * cancelled, so a caller must not be able to claim them.
 */
const CLIENT_SOURCES: Readonly<Record<string, RunSource>> = { dashboard: 'WEB_APP' };

const CreateRunHeaders = Type.Object({
  'x-hangar-client': Type.Optional(
    Type.String({
      maxLength: 100,
      description: 'The client making the request: `dashboard` gives the run the source WEB_APP; otherwise API.',
    }),
  ),
  'idempotency-key': Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: MAX_IDEMPOTENCY_KEY_LENGTH,
      // Visible ASCII and spaces, as a UUID or any client's own scheme is written.
      pattern: '^[\\x20-\\x7e]*[\\x21-\\x7e][\\x20-\\x7e]*$',
      [PATTERN_IN_WORDS]: 'printable ASCII characters and spaces, not only spaces',
      description: `Makes the create safe to retry: the same key from the same team within ${IDEMPOTENCY_KEY_HOURS} hours gets the first request's answer again (with the header Idempotent-Replayed: true) and creates no run; with a different body, or from another member, 422 idempotency_key_reused. One new key per run, e.g. a UUID.`,
    }),
  ),
});

const CancelledResponses = { 200: Type.String({ description: 'The cancelled run ID' }), ...ProblemResponses };

/** A cancel answers the run ID as a JSON string, not a bare string. */
function sendRunId(reply: FastifyReply, runId: string) {
  return reply.type('application/json; charset=utf-8').send(JSON.stringify(runId));
}

export function registerRunRoutes(parent: FastifyInstance, runs: RunsService): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['Runs'];

  const createSchema = {
    tags,
    headers: CreateRunHeaders,
    body: CreateRunBody,
    response: { 200: CreateRunResponse, ...ProblemResponses },
  };
  /** A create, once per Idempotency-Key when the request has one; both create routes share the keys. */
  const create = async (request: FastifyRequest, body: CreateRunBody, key: string | undefined, reply: FastifyReply) => {
    const caller = callerOf(request);
    const client = request.headers['x-hangar-client'];
    const origin = {
      source:
        (typeof client === 'string' && Object.hasOwn(CLIENT_SOURCES, client) ? CLIENT_SOURCES[client] : undefined) ??
        'API',
      ...(request.ip ? { clientAddress: request.ip } : {}),
    };
    if (key === undefined) return runs.create(caller, body, origin);
    const { answer, replayed } = await runs.createOnce(
      caller,
      body,
      idempotencyKey(key, caller.principal.uid, body),
      origin,
    );
    if (replayed) reply.header('Idempotent-Replayed', 'true');
    return answer;
  };
  app.post('/agent/runs', { schema: { ...createSchema, summary: 'Create a run' } }, async (request, reply) =>
    create(request, request.body, request.headers['idempotency-key'], reply),
  );
  app.post(
    '/agent/run',
    { schema: { ...createSchema, summary: 'Create a run (deprecated: use POST /agent/runs)', deprecated: true } },
    async (request, reply) => {
      reply.header('Deprecation', 'true').header('Link', '</api/v1/agent/runs>; rel="successor-version"');
      return create(request, request.body, request.headers['idempotency-key'], reply);
    },
  );

  app.get(
    '/agent/runs',
    {
      schema: {
        tags,
        summary: 'List runs',
        description: 'Filter with the query parameters; `metadata[key]=value` pairs (at most 5) filter on metadata.',
        querystring: ListRunsQuery,
        response: { 200: ListRunsResponse, ...ProblemResponses },
      },
    },
    async (request) =>
      runs.list(callerOf(request), request.query, metadataFilterFromQuery(request.query as Record<string, unknown>)),
  );

  app.get(
    '/agent/runs/:runId',
    { schema: { tags, summary: 'Get a run', params: RunIdParams, response: { 200: RunItem, ...ProblemResponses } } },
    async (request) => runs.get(callerOf(request), request.params.runId),
  );

  app.post(
    '/agent/runs/:runId/cancel',
    {
      schema: {
        tags,
        summary: 'Cancel a queued or running run',
        params: RunIdParams,
        response: CancelledResponses,
      },
    },
    async (request, reply) => sendRunId(reply, await runs.cancel(callerOf(request), request.params.runId)),
  );
  app.post(
    '/admin/runs/:runId/cancel',
    {
      config: { adminOnly: true },
      schema: {
        tags: ['Administration'],
        summary: "Stop any team's run, of any kind (administrators)",
        description:
          'Unlike the team cancel, this also stops self-hosted runs and runs being prepared (PENDING); the engine or worker holding the run kills its processes. 400 when the run has ended.',
        params: RunIdParams,
        response: CancelledResponses,
      },
    },
    async (request, reply) => sendRunId(reply, await runs.cancelAsOperator(principalOf(request), request.params.runId)),
  );

  app.get(
    '/agent/runs/:runId/timeline',
    {
      schema: {
        tags,
        summary: 'Timeline of a run',
        params: RunIdParams,
        response: { 200: TimelineResponse, ...ProblemResponses },
      },
    },
    async (request) => runs.timeline(callerOf(request), request.params.runId),
  );

  app.post(
    '/agent/runs/:runId/followups',
    {
      schema: {
        tags,
        summary: 'Send a follow-up message to a run',
        description:
          'Routed by the run state: queued or being prepared, it joins the initial input; running, it goes to the live agent (or its next turn); ended, a new execution continues the conversation; failed environment setup with the debug window open, a debug agent starts in the kept workspace.',
        params: RunIdParams,
        body: FollowupBody,
        response: { 200: Type.Object({}), ...ProblemResponses },
      },
    },
    async (request) => runs.followup(callerOf(request), request.params.runId, request.body),
  );
}
