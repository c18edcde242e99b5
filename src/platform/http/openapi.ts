import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';

export const Problem = Type.Object(
  {
    type: Type.String(),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    instance: Type.String(),
    error: Type.String(),
    error_code: Type.String(),
    retryable: Type.Boolean(),
    trace_id: Type.String(),
    provider: Type.Optional(
      Type.String({
        description:
          'external_authentication_required: the integration to connect (no integration of Hangar answers it yet)',
      }),
    ),
    auth_url: Type.Optional(
      Type.String({ format: 'uri', description: 'external_authentication_required: where to connect it' }),
    ),
  },
  {
    description:
      'RFC 7807 problem details (application/problem+json); `type` is the documentation page of `error_code` on this server (`/errors/<error_code>`); some carry extension members',
    additionalProperties: true,
  },
);

/** Error responses every authenticated route may give; listed so the OpenAPI document shows them. */
export const ProblemResponses = { '4xx': Problem, '5xx': Problem };

/** Hangar's mark (the dashboard's favicon) and name, in place of the reference page's default logo and title. */
const MARK =
  '<rect width="32" height="32" rx="6" fill="#1f4e8c"/><path d="M6 22 16 8l10 14h-4l-6-8-6 8z" fill="#fff"/>';
const FAVICON = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">${MARK}</svg>`;
const LOGO =
  `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 190 40" width="190" height="40"><g transform="translate(0 4)">${MARK}</g>` +
  '<text x="42" y="28" font-family="system-ui, sans-serif" font-size="22" font-weight="600" fill="#fff">Hangar API</text></svg>';

export async function registerOpenApi(app: FastifyInstance, publicUrl: string, version: string): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Hangar API',
        version,
        description:
          'Self-hosted service for running coding agents. All routes take `Authorization: Bearer <API key>`.',
      },
      servers: [{ url: `${publicUrl}/api/v1` }],
      components: { securitySchemes: { apiKey: { type: 'http', scheme: 'bearer' } } },
      security: [{ apiKey: [] }],
    },
    // Routes are registered under /api/v1; the document lists them relative to that server URL.
    transform: ({ schema, url }) => ({ schema, url: url.replace(/^\/api\/v1/, '') }),
  });
  // The reference page loads only its own files, calls only the API ("Try it out", which may be at the public URL
  // rather than the address the browser used), and may not be framed. Its React code sets inline styles, so
  // styles (not scripts) may be inline. No validator badge: it would load from validator.swagger.io.
  // Tags start closed: opened all at once ('list'), the bundled Swagger UI stopped rendering after the seventh
  // operation once the document passed 90 paths (three of 23 tags shown, no error in the console).
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    uiConfig: { docExpansion: 'none', deepLinking: true, validatorUrl: null },
    logo: { type: 'image/svg+xml', content: LOGO, href: '/', target: '_self' },
    theme: {
      title: 'Hangar API reference',
      favicon: [{ filename: 'favicon.svg', rel: 'icon', sizes: 'any', type: 'image/svg+xml', content: FAVICON }],
    },
    staticCSP:
      `default-src 'self'; connect-src 'self' ${new URL(publicUrl).origin}; img-src 'self' data:; font-src 'self' data:; ` +
      "style-src 'self' 'unsafe-inline'; script-src 'self'; script-src-attr 'none'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  });
}
