import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import { Type } from 'typebox';
import type { DB } from '../database.js';
import { callerOf } from '../identities/index.js';
import { ProblemResponses } from '../platform/http/openapi.js';
import { SignedLinkQuery, type UrlSigner } from '../platform/signed-urls.js';
import { handoffDownloadPath, RunHandoff } from './handoff.js';
import { RunIdParams } from './schemas.js';
import { callerVisibility } from './visibility.js';

export const HandoffAttachmentList = Type.Object({
  attachments: Type.Array(
    Type.Object({
      attachment_id: Type.String({
        description: '`input-<n>` for a file the run was created with, `session-<n>` for a CLI session',
      }),
      download_url: Type.String({ format: 'uri', description: 'Signed link; works without an API key for 10 minutes' }),
      filename: Type.String(),
      mime_type: Type.Optional(Type.String()),
    }),
  ),
});

const DownloadParams = Type.Object({
  runId: Type.String({ minLength: 1, maxLength: 200 }),
  attachmentId: Type.String({ minLength: 1, maxLength: 40 }),
});

/** GET /agent/runs/{id}/handoff/attachments and the downloads its signed links point to. */
export function registerHandoffRoutes(parent: FastifyInstance, deps: { db: Kysely<DB>; signer: UrlSigner }): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const handoff = new RunHandoff(deps.db, deps.signer);
  app.get(
    '/agent/runs/:runId/handoff/attachments',
    {
      schema: {
        tags: ['Runs'],
        summary: 'Files the next execution of a run picks up',
        description:
          "The files the run was created with, and the session a third-party CLI harness (Claude Code, Codex, Gemini CLI) kept at the end of the run's latest ended execution, each with a signed, time-limited download link.",
        params: RunIdParams,
        response: { 200: HandoffAttachmentList, ...ProblemResponses },
      },
    },
    async (request) => handoff.list(callerVisibility(callerOf(request)), request.params.runId),
  );
  // No API key: the signed link is the credential, and it names one run and one attachment.
  app.get(
    '/downloads/runs/:runId/handoff/:attachmentId',
    { schema: { hide: true, params: DownloadParams, querystring: SignedLinkQuery }, config: { public: true } },
    async (request, reply) => {
      const { runId, attachmentId } = request.params;
      deps.signer.require(handoffDownloadPath(runId, attachmentId), request.query);
      const file = await handoff.download(runId, attachmentId);
      return reply
        .type(file.mimeType)
        .header('x-content-type-options', 'nosniff')
        .header('content-disposition', contentDisposition(file.filename))
        .send(file.data);
    },
  );
}

/** The name as given (RFC 6266 filename*), with a plain-ASCII fallback: a header must not carry anything else. */
function contentDisposition(filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(filename)}`;
}
