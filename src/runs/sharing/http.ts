import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { callerOf } from '../../identities/index.js';
import { ProblemResponses } from '../../platform/http/openapi.js';
import {
  FollowupBody,
  RunIdParams,
  ShareBody,
  SharedConversationResponse,
  ShareLink,
  TimelineResponse,
} from '../schemas.js';
import type { RunSharing } from './service.js';
import { SharedRun } from './view.js';

/** The header a share link's page sends its secret in (the secret is the link's fragment, so no URL carries it). */
export const SHARE_SECRET_HEADER = 'x-hangar-share-secret';

const SecretHeader = Type.Object({
  [SHARE_SECRET_HEADER]: Type.Optional(
    Type.String({ maxLength: 200, description: "The share link's secret: what follows `#` in its URL" }),
  ),
});

const secretOf = (request: FastifyRequest): string | undefined => {
  const value = request.headers[SHARE_SECRET_HEADER];
  return typeof value === 'string' ? value : undefined;
};

/** The run's share link, for those with a key, and the run as the link shows it, for anyone holding the link. */
export function registerShareRoutes(parent: FastifyInstance, sharing: RunSharing): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['Runs'];

  app.get(
    '/agent/runs/:runId/sharing',
    {
      schema: {
        tags,
        summary: "The run's share link (without its URL, which is shown once)",
        params: RunIdParams,
        response: { 200: ShareLink, ...ProblemResponses },
      },
    },
    async (request) => sharing.current(callerOf(request), request.params.runId),
  );
  app.put(
    '/agent/runs/:runId/sharing',
    {
      schema: {
        tags,
        summary: 'Share the run: a new link (the previous one stops working)',
        description:
          "The run's creator or a team administrator. The answer's `url` is the link, shown this once. Audited (run.share.create).",
        params: RunIdParams,
        body: ShareBody,
        response: { 200: ShareLink, ...ProblemResponses },
      },
    },
    async (request) =>
      sharing.share(callerOf(request), request.params.runId, request.body.public_access, request.ip ?? null),
  );
  app.delete(
    '/agent/runs/:runId/sharing',
    {
      schema: {
        tags,
        summary: "Revoke the run's share link",
        description: "The run's creator or a team administrator. Audited (run.share.revoke).",
        params: RunIdParams,
        response: { 200: ShareLink, ...ProblemResponses },
      },
    },
    async (request) => sharing.revoke(callerOf(request), request.params.runId, request.ip ?? null),
  );

  const shared = {
    tags: ['Shared runs'],
    headers: SecretHeader,
    security: [{}],
  };
  const description = `Needs no API key: the link's secret in ${SHARE_SECRET_HEADER}. A wrong, revoked or orphaned secret is 404, and counts as a failed authentication of the address (429 with Retry-After past the limit).`;
  app.get(
    '/shared/run',
    {
      config: { public: true },
      schema: {
        ...shared,
        summary: 'The run a share link opens',
        description,
        response: { 200: SharedRun, ...ProblemResponses },
      },
    },
    async (request) => sharing.run(secretOf(request) ?? '', request.ip),
  );
  app.get(
    '/shared/run/conversation',
    {
      config: { public: true },
      schema: {
        ...shared,
        summary: "The conversation of a share link's run",
        description,
        response: { 200: SharedConversationResponse, ...ProblemResponses },
      },
    },
    async (request) => sharing.conversation(secretOf(request) ?? '', request.ip),
  );
  app.get(
    '/shared/run/timeline',
    {
      config: { public: true },
      schema: {
        ...shared,
        summary: "The timeline of a share link's run",
        description,
        response: { 200: TimelineResponse, ...ProblemResponses },
      },
    },
    async (request) => sharing.timeline(secretOf(request) ?? '', request.ip),
  );
  app.post(
    '/shared/run/followups',
    {
      config: { public: true },
      schema: {
        ...shared,
        summary: "A follow-up to a share link's run (EDITOR links only)",
        description: `${description} A VIEWER link is 403. The follow-up is made as the run's creator (their right to its secrets is checked) and recorded as made through the link: \`via: shared_link\` on its timeline entry, an audit entry run.followup by the actor shared_link.`,
        body: FollowupBody,
        response: { 200: Type.Object({}), ...ProblemResponses },
      },
    },
    async (request) => sharing.followup(secretOf(request) ?? '', request.ip, request.body),
  );
}
