import type { FastifyInstance } from 'fastify';

/**
 * What a response without a policy of its own gets (API answers, downloads, assets): it may load nothing, run
 * nothing and be framed nowhere, so a JSON body or a downloaded file opened in a browser cannot act as a page.
 * Pages set their own before this hook runs (the dashboard in dashboard.ts, the API reference in openapi.ts).
 */
const NOTHING_POLICY = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/** Headers on every response: no MIME sniffing, no framing (clickjacking), no referrer carrying signed links. */
export function addSecurityHeaders(app: FastifyInstance): void {
  // A callback hook, not an async one: it runs on every answer, and an async hook costs a promise each time.
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (!reply.hasHeader('content-security-policy')) reply.header('content-security-policy', NOTHING_POLICY);
    reply.header('x-content-type-options', 'nosniff');
    reply.header('x-frame-options', 'DENY');
    if (!reply.hasHeader('referrer-policy')) reply.header('referrer-policy', 'no-referrer');
    done(null, payload);
  });
}
