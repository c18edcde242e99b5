import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { type Authenticator, callerOf } from '../identities/index.js';
import { ProblemResponses } from '../platform/http/openapi.js';
import { activeRedactor } from '../platform/redaction/active.js';
import { redactBytes } from '../platform/redaction/bytes.js';
import { SignedLinkQuery, type UrlSigner } from '../platform/signed-urls.js';
import {
  ArtifactParams,
  ArtifactResponse,
  ProgressBody,
  ReportArtifactBody,
  RunByExternalReferenceQuery,
  RunByExternalReferenceResponse,
  UploadArtifactQuery,
} from './schemas.js';
import { type ArtifactsService, downloadPath, type Reader } from './service.js';

export interface ArtifactRouteDeps {
  artifacts: ArtifactsService;
  signer: UrlSigner;
  authenticate: Authenticator;
  /** Reads a task token: the run and execution it was issued for, or null. */
  verifyTaskToken(token: string): { runId: string; executionId: number } | null;
  maxUploadBytes: number;
}

function bearer(request: FastifyRequest): string | undefined {
  const value = request.headers.authorization;
  return value?.startsWith('Bearer ') ? value.slice('Bearer '.length).trim() : undefined;
}

/**
 * Artifact reads (public ones need no API key, so these routes authenticate for themselves), signed downloads,
 * the external-reference lookup, and the harness-support calls a running agent makes with its task token.
 */
export function registerArtifactRoutes(parent: FastifyInstance, deps: ArtifactRouteDeps): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const { artifacts } = deps;

  /** The caller if they sent an API key (a wrong key is still 401), or nobody. */
  const reader = async (request: FastifyRequest): Promise<Reader> =>
    request.headers.authorization === undefined
      ? null
      : deps.authenticate.principal(request.headers.authorization, request.ip);

  app.get(
    '/agent/artifacts/:artifactUid',
    {
      schema: {
        tags: ['Artifacts'],
        summary: 'An artifact',
        description:
          'Public artifacts can be read without an API key. FILE and SCREENSHOT carry a time-limited `download_url`; PLAN carries its `content`.',
        params: ArtifactParams,
        response: { 200: ArtifactResponse, ...ProblemResponses },
      },
      config: { public: true },
    },
    async (request) => artifacts.get(await reader(request), request.params.artifactUid),
  );
  app.get(
    '/agent/artifacts/:artifactUid/download',
    {
      schema: {
        tags: ['Artifacts'],
        summary: 'Download an artifact (redirect to a time-limited link)',
        params: ArtifactParams,
        response: {
          302: Type.Null({ description: 'Location holds a time-limited download link' }),
          ...ProblemResponses,
        },
      },
      config: { public: true },
    },
    async (request, reply) =>
      reply.redirect(await artifacts.downloadLink(await reader(request), request.params.artifactUid), 302),
  );

  app.get(
    '/downloads/artifacts/:artifactUid',
    { schema: { hide: true, params: ArtifactParams, querystring: SignedLinkQuery }, config: { public: true } },
    async (request, reply) => {
      // The signature covers the path, so a link cannot be altered to reach another artifact.
      deps.signer.require(downloadPath(request.params.artifactUid), request.query);
      const download = await artifacts.openDownload(request.params.artifactUid);
      reply
        .header('content-type', download.contentType)
        // Always a download, never rendered from Hangar's own origin (an uploaded HTML file must not run here).
        .header('content-disposition', `attachment; filename*=UTF-8''${encodeURIComponent(download.filename)}`)
        .header('x-content-type-options', 'nosniff')
        .header('cache-control', 'private, max-age=60');
      if (download.size !== null) reply.header('content-length', download.size);
      return reply.send(download.stream);
    },
  );

  app.get(
    '/agent/run-by-external-reference',
    {
      schema: {
        tags: ['Runs'],
        summary: 'The run that reported a pull request or ticket address',
        description:
          'Addresses are compared in canonical form: scheme and host case, default ports, trailing slashes and fragments do not matter.',
        querystring: RunByExternalReferenceQuery,
        response: { 200: RunByExternalReferenceResponse, ...ProblemResponses },
      },
    },
    async (request) => artifacts.runByExternalReference(callerOf(request), request.query.url),
  );

  // Harness-support: authenticated by the task token of a running execution, not by an API key.
  const executing = (request: FastifyRequest) => {
    const token = bearer(request);
    return artifacts.executing(token === undefined ? null : deps.verifyTaskToken(token));
  };
  app.post(
    '/harness-support/report-artifact',
    {
      schema: {
        tags: ['Harness support'],
        summary: 'Report an artifact of the running execution (task token)',
        body: ReportArtifactBody,
        response: { 201: ArtifactResponse, ...ProblemResponses },
      },
      config: { public: true },
    },
    async (request, reply) => {
      const run = await executing(request);
      const body = activeRedactor(run.runId, run.executionId)?.deep(request.body) ?? request.body;
      return reply.code(201).send(await artifacts.report(run, body));
    },
  );

  app.post(
    '/harness-support/report-progress',
    {
      schema: {
        tags: ['Harness support'],
        summary: 'Report progress of the running execution (task token); it shows on the timeline as agent_progress',
        body: ProgressBody,
        response: { 200: Type.Object({}), ...ProblemResponses },
      },
      config: { public: true },
    },
    async (request) => {
      const run = await executing(request);
      await artifacts.reportProgress(
        run,
        activeRedactor(run.runId, run.executionId)?.deep(request.body) ?? request.body,
      );
      return {};
    },
  );

  app.register(async (uploads) => {
    // Any content type is the file's own: nothing is parsed, the bytes are kept as they came.
    uploads.removeAllContentTypeParsers();
    uploads.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: deps.maxUploadBytes }, (_request, body, done) =>
      done(null, body),
    );
    uploads.withTypeProvider<TypeBoxTypeProvider>().post(
      '/harness-support/upload-artifact',
      {
        schema: {
          tags: ['Harness support'],
          summary: 'Upload a FILE or SCREENSHOT artifact of the running execution (task token)',
          description: 'The body is the file; its Content-Type is kept as the mime type.',
          querystring: UploadArtifactQuery,
          response: { 201: ArtifactResponse, ...ProblemResponses },
        },
        config: { public: true },
      },
      async (request, reply) => {
        const run = await executing(request);
        const given = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        const mediaType = request.headers['content-type'];
        // The run's secret values out of a text file, when the execution runs in this process (see docs/security.md).
        const redactor = activeRedactor(run.runId, run.executionId);
        const bytes = redactor ? redactBytes(redactor, given, mediaType) : given;
        const query = redactor ? redactor.deep(request.query) : request.query;
        return reply.code(201).send(await artifacts.upload(run, query, bytes, mediaType));
      },
    );
  });
}
